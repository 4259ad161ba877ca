"""Other libraries' APIs on top of tgbhub's verified cache, so their scripts run by changing one import line.

- :mod:`tgbhub.compat.tgb`: py-tgb 2.3.0's ``LinkPropPredDataset``, ``NodePropPredDataset`` and ``Evaluator``.
"""
