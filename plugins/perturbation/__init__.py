"""Perturbation: PRAM, noise addition and rank swapping, and the utility and risk measures of a
perturbed release (docs/perturbation.md)."""
