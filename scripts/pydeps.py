"""Python packages a benchmark script needs, pip-installed into the running
interpreter's environment when missing (the scripts run from the project
venv or a throwaway one). Owns nothing else."""
import importlib
import subprocess
import sys


def ensure(module, package):
    """Import `module`, first installing `package` with pip if it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
        importlib.invalidate_caches()
        return importlib.import_module(module)
