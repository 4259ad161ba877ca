"""T-GRAB (Dizaji et al.): synthetic diagnostic temporal graphs, bit for bit the authors' random streams.

``protocol`` holds the four generators (periodicity ER/SBM, cause-and-effect, long-range), ``catalogue`` the 52
published datasets, ``artifacts`` the Parquet writers and manifest, ``family`` the plug-in the registry loads.
"""
