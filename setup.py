"""Build hooks (everything else is in pyproject.toml): the optional C accelerators of the observation
encoder (``_fastobs``) and of the lookahead's move facts (``_fastlook``), and the shipped policies
in the wheel.

``optional=True``: without a C compiler the build skips the extensions and
``allfives_env.observation`` and ``allfives_env.lookahead`` use their pure-Python code, which gives
the same vectors and facts. ``-ffp-contract=off`` (GCC, Clang) keeps the compiler from fusing a
multiply and an add, which would round differently from Python's floats.

The trained policies stay in ``models/`` at the root of the repository; a wheel (``pip install .``)
carries a copy of ``models/*.zip|onnx|json``, ``models/play/*.json`` and ``models/README.md`` inside the ``allfives_agents`` package,
``allfives_agents/model_files/``, where ``allfives_agents.models.model_path`` finds them with ``importlib.resources``.
An editable install copies nothing: ``allfives_agents.models`` reads the checkout's ``models/`` directly.
"""

import glob
import os

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

MODELS = "models"
#: the installed name of each folder of the repository that is not named as it installs: a wheel puts
#: only ``allfives*`` packages at the top of site-packages (no ``agents`` or ``train`` to collide with
#: other distributions or a user's own modules)
RENAMED = {"allfives_agents": "agents", "allfives_train": "train"}


def packages() -> list[str]:
    """Every package of the wheel, by its installed name."""
    found = find_packages(include=["allfives", "allfives.*", "allfives_env", "allfives_env.*"])
    for name, folder in RENAMED.items():
        found += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]
    return found
MODEL_PATTERNS = ("*.zip", "*.onnx", "*.json", "README.md")
PACKAGE_DIR = os.path.join("allfives_agents", "model_files")  # allfives_agents.models.PACKAGE_DIR


def model_files() -> list[str]:
    """The shipped files, relative to ``models/``: the policies and their cards, and ``play/*.json``
    (the fitted models of play, ``allfives_agents.models.play_model_path``)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), MODELS)
    patterns = [*MODEL_PATTERNS, os.path.join("play", "*.json")]
    return sorted(os.path.relpath(f, here) for pattern in patterns for f in glob.glob(os.path.join(here, pattern)))


class build_py_with_models(build_py):
    """``build_py`` that also copies the shipped models into ``allfives_agents/model_files/`` of the build."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = os.path.join(self.build_lib, PACKAGE_DIR)
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), MODELS)
        for name in model_files():
            self.mkpath(os.path.dirname(os.path.join(target, name)))
            self.copy_file(os.path.join(here, name), os.path.join(target, name))

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        target = os.path.join(self.build_lib, PACKAGE_DIR)
        return outputs + [os.path.join(target, name) for name in model_files()]


class build_ext_exact(build_ext):
    """``build_ext`` with floating point as Python's: no fused multiply-add (MSVC fuses none by default)."""

    def build_extensions(self):
        if self.compiler.compiler_type != "msvc":
            for ext in self.extensions:
                ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
        super().build_extensions()


setup(
    packages=packages(),
    package_dir=RENAMED,
    ext_modules=[
        Extension("allfives_env._fastobs", ["allfives_env/_fastobs.c"], depends=["allfives_env/_fastargs.h", "allfives_env/_fastbits.h", "allfives_env/_fastview.h"], optional=True),
        Extension("allfives_env._fastlook", ["allfives_env/_fastlook.c"], depends=["allfives_env/_fastargs.h", "allfives_env/_fastbits.h", "allfives_env/_fastview.h"], optional=True),
    ],
    cmdclass={"build_py": build_py_with_models, "build_ext": build_ext_exact},
)
