"""Feature weighting: FWELL and Private FWELL, their evaluation and charts."""
