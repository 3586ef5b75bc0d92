"""The one compiled piece of auger: the text tokenizer (``src/auger/_textscan.c``).

Everything else is declared in pyproject.toml. The extension is optional: without a C compiler
the install still succeeds and text files are read by pyarrow and the Python parser alone.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "auger._textscan",
            ["src/auger/_textscan.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        )
    ]
)
