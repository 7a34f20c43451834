"""The engine is pure standard library: importing it pulls in no numpy, gymnasium or torch."""

import subprocess
import sys


def test_engine_imports_only_the_standard_library():
    code = (
        "import sys; import allfives_env.engine, allfives_env.engine.record, allfives_env.engine.seeding; "
        "heavy = [m for m in ('numpy', 'gymnasium', 'pettingzoo', 'torch', 'stable_baselines3') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"engine import pulled in {out}"
