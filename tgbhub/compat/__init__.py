"""Drop-in for other libraries: their APIs on top of tgbhub's verified cache, so their scripts run by changing one
import line, and their file formats written from a dataset.

- :mod:`tgbhub.compat.tgb`: every name TGB's example scripts import from py-tgb 2.3.0 (the numpy and PyG datasets,
  the negative samplers, the evaluator, the utilities), and a runner that executes a TGB script unchanged.
- :mod:`tgbhub.compat.export`: files for DyGLib, the TLPCF forks' ``ml_`` loaders and TGB's negatives pickle.
- :mod:`tgbhub.compat.tgm`: TGM's negatives hooks over a dataset's own negatives (the data is ``ds.to_tgm()``).
"""
