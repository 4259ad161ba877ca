"""What is made on this machine: the gateway to the generators (the local-build source), imports of other
benchmarks' releases, derived datasets and task artifacts built on request, and the rebuild doctor.

:mod:`tgbhub.local.gateway` is the one library module that imports generator code; the others reach the generators
through it.
"""
