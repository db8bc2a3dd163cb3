"""What an installed adnet carries besides its code: the portal's templates, the static files (htmx, the embed
script) and the contracts' compiled artifacts, as data inside the ``adnet`` package (``adnet/templates``,
``adnet/static``, ``adnet/contracts/build``), where ``adnet.core.files.shipped`` finds them. A checkout keeps them
at the top of the repository, where they are edited; and the data files a package reads (``adnet/campaigns/data``).
Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

DATA = {"adnet.templates": "templates", "adnet.static": "static", "adnet.contracts.build": "contracts/build"}


def data_packages() -> dict[str, list[str]]:
    """Every directory of the data, as the package setuptools installs its files in."""
    packages = {}
    for package, directory in DATA.items():
        root = Path(directory)
        for folder in [root, *sorted(path for path in root.rglob("*") if path.is_dir())]:
            packages[".".join([package, *folder.relative_to(root).parts])] = ["*"]
    return packages


setup(
    packages=[*find_packages(include=["adnet", "adnet.*", "api", "api.*", "portal", "portal.*", "web", "web.*",
                                      "migrations"]),
              *data_packages()],
    package_dir=DATA,
    package_data={**data_packages(), "adnet.campaigns": ["data/*.json"]},
)
