"""A PEP 517 build backend in the standard library alone: pip can install this package with
no index and nothing else installed (`pip install --no-index --no-build-isolation .`)."""
import base64
import hashlib
import os
import tarfile
import zipfile

NAME = "crm_client"
DIST = "crm-client"
VERSION = "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as readme:
        description = readme.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\nVersion: {VERSION}\n"
        "Summary: Official Python client of the CRM REST API v1 (standard library only)\n"
        "Requires-Python: >=3.8\nLicense: Proprietary\n"
        "Description-Content-Type: text/markdown\n\n" + description
    )


def _package_files():
    base = os.path.join(ROOT, NAME)
    for folder, _dirs, files in os.walk(base):
        for file in sorted(files):
            if file.endswith(".py"):
                path = os.path.join(folder, file)
                yield path, os.path.relpath(path, ROOT).replace(os.sep, "/")


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    filename = f"{NAME}-{VERSION}-{TAG}.whl"
    info = f"{NAME}-{VERSION}.dist-info"
    entries = [(arcname, open(path, "rb").read()) for path, arcname in _package_files()]
    entries.append((f"{info}/METADATA", _metadata().encode()))
    entries.append((f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: crm_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()))
    record = [_record_line(name, data) for name, data in entries] + [f"{info}/RECORD,,"]
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            wheel.writestr(name, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    base = f"{DIST.replace('-', '_')}-{VERSION}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as sdist:
        for path in ["pyproject.toml", "README.md"]:
            sdist.add(os.path.join(ROOT, path), f"{base}/{path}")
        sdist.add(os.path.join(ROOT, "build_backend", "crm_build.py"), f"{base}/build_backend/crm_build.py")
        for path, arcname in _package_files():
            sdist.add(path, f"{base}/{arcname}")
    return filename
