"""Builds the optional C loop of the hash chain; everything else is in pyproject.toml.

optional=True: without a working C compiler the install still succeeds, and the store uses its
pure-Python loop (engine/store/chain.py), which is the reference anyway.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("engine.store._chain_c", ["engine/store/_chain_c.c"], optional=True),
    ]
)
