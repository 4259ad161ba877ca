"""Drop-in for other libraries: their APIs on top of tgbhub's verified cache, so their scripts run by changing one
import line, and their file formats written from a dataset.

- :mod:`tgbhub.compat.tgb`: py-tgb 2.3.0's ``LinkPropPredDataset``, ``NodePropPredDataset`` and ``Evaluator``.
- :mod:`tgbhub.compat.export`: files for DyGLib, the TLPCF forks' ``ml_`` loaders and TGB's negatives pickle.
- :mod:`tgbhub.compat.tgm`: TGM's negatives hooks over a dataset's own negatives (the data is ``ds.to_tgm()``).
"""
