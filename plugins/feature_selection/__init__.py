"""Feature selection under privacy: the greedy and maximal selections of paper 000, their
baselines (RF flipping, DP selection, all features), k-AC, and the privacy-aware evaluation E(S).
"""
