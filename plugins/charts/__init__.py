"""Charts over a study's result table."""
