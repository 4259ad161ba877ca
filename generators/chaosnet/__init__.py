"""ChaosNetBench (coupled standard maps on a ring): bit-exact trajectories, chaos indicators, HDF5 artifacts.

``libm`` pins the C library's sin/cos, ``dynamics`` holds the numba kernels, ``reference`` the plain numpy peer,
``catalogue`` the 96 + 4 instances, ``artifacts`` the HDF5 writer, the manifest and the local-build entry point.
"""
