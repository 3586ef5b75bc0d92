"""The compiled pieces of auger: the text tokenizer (``src/auger/_textscan.c``) and the JSON
member projector (``src/auger/_jsonscan.c``).

Everything else is declared in pyproject.toml. The extensions are optional: without a C compiler
the install still succeeds and files are read by pyarrow and the Python parsers alone.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "auger._textscan",
            ["src/auger/_textscan.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
        Extension(
            "auger._jsonscan",
            ["src/auger/_jsonscan.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
    ]
)
