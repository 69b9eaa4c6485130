"""What the package, the registry entry, the Claude Desktop bundle and the image say about the server
agrees with the server: one version, the registry's schema and rules, options that exist.

Building and running them is in tests/e2e (test_package.py, test_bundle.py, test_image.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from arag_mcp.indexer.command_options import LOG_LEVELS
from arag_mcp.indexer.index.keywords.words import KEYWORD_MATCHES
from arag_mcp.server.tools.profiles import DEFAULT_PROFILE, PROFILES

from .conftest import FIXTURES, REPO, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli where tomllib is missing
    import tomli as tomllib

REGISTRY_SCHEMA = FIXTURES / "mcp-registry-server.schema.json"
"""The MCP Registry's server.json schema 2025-12-11, as the registry validates with it."""
SERVER_NAME = re.compile(
    r"^io\.github\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$"
)
"""The registry's name rule for a GitHub namespace: io.github.<owner>/<name>, each starting and ending alphanumeric."""
VERSION_RANGE = re.compile(r"^\s*(?:[\^~<>=!]|.*\|\||.*\s-\s)|(?:^|\.)[xX*](?:\.|$)")
"""What the registry refuses as a range rather than one version: ^1.2, ~1.2, >=1.2, 1.x, 1.*, 1 - 2, 1 || 2."""


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def server_json() -> dict:
    return json.loads((REPO / "server.json").read_text())


def bundle_manifest() -> dict:
    return json.loads((REPO / "bundle" / "manifest.json").read_text())


def server_variables() -> set[str]:
    """The environment variables `arag-mcp --help` says it reads."""
    result = run_cli("arag_mcp.server", "--help")
    return set(re.findall(r"\[env:\s+([A-Z0-9_]+)\]", result.stdout))


def choices_of(variable: str) -> set[str]:
    return {
        "ARAG_MCP_PROFILE": set(PROFILES),
        "ARAG_MCP_KEYWORD_MATCH": set(KEYWORD_MATCHES),
        "ARAG_MCP_LOG_LEVEL": set(LOG_LEVELS),
    }[variable]


@pytest.mark.parametrize("module", ["arag_mcp.indexer", "arag_mcp.server"])
def test_both_commands_print_the_package_version(module: str):
    result = run_cli(module, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1] == project()["version"]


def test_server_json_meets_the_registry_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(REGISTRY_SCHEMA.read_text())
    entry = server_json()
    assert entry["$schema"] == schema["$id"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(entry)]
    assert not errors, errors


def test_the_registry_schema_check_refuses_what_the_registry_refuses():
    """The schema check above can fail: a long description, a bad name and a 'latest' version are refused."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(json.loads(REGISTRY_SCHEMA.read_text()))
    for change in ({"description": "x" * 101}, {"name": "arag-mcp"}):
        assert not validator.is_valid({**server_json(), **change}), change
    entry = server_json()
    entry["packages"][0]["version"] = "latest"
    assert not validator.is_valid(entry)


def _keys(value: object) -> set[str]:
    """Every property name used in a JSON value, at any depth, except the names of `variables` entries."""
    if isinstance(value, list):
        return set().union(*map(_keys, value)) if value else set()
    if not isinstance(value, dict):
        return set()
    names = set(value)
    for key, item in value.items():
        if key == "variables":
            names |= set().union(*map(_keys, item.values()))
        else:
            names |= _keys(item)
    return names


def test_server_json_uses_only_properties_the_schema_defines():
    """The schema lets unknown properties through; a misspelt one (isRequred) would be silently ignored."""
    schema = json.loads(REGISTRY_SCHEMA.read_text())
    defined = {name for definition in schema["definitions"].values() for name in _keys(definition)}
    assert _keys(server_json()) <= defined, _keys(server_json()) - defined


def test_server_json_follows_the_registry_rules_beyond_the_schema():
    entry = server_json()
    version = project()["version"]
    assert SERVER_NAME.match(entry["name"]), entry["name"]
    assert 0 < len(entry["description"]) <= 100
    assert entry["version"] == version and not VERSION_RANGE.search(version)
    pypi, oci = entry["packages"]
    assert pypi["registryType"] == "pypi" and pypi["registryBaseUrl"] == "https://pypi.org"
    assert pypi["identifier"] == project()["name"] and pypi["version"] == version
    assert pypi["runtimeHint"] == "uvx" and "fileSha256" not in pypi
    assert oci["registryType"] == "oci" and oci["identifier"].endswith(f":{version}")
    for package in entry["packages"]:
        for argument in package.get("packageArguments", []) + package.get("runtimeArguments", []):
            if argument["type"] == "named":
                assert not re.search(r"[<> $]", argument["name"]), argument
                assert not argument.get("value", "").startswith(argument["name"]), argument


def test_the_index_is_a_required_filepath_argument_of_the_pypi_package():
    (index,) = server_json()["packages"][0]["packageArguments"]
    assert (index["type"], index["name"], index["format"], index["isRequired"]) == (
        "named",
        "--index",
        "filepath",
        True,
    )
    (mount,) = server_json()["packages"][1]["runtimeArguments"]
    assert "dst=/index" in mount["value"] and mount["variables"]["index_folder"]["format"] == "filepath"


def test_server_json_names_only_variables_the_server_reads_with_their_choices():
    read = server_variables()
    for package in server_json()["packages"]:
        for variable in package["environmentVariables"]:
            name = variable["name"]
            if name.startswith("ARAG_"):
                assert name in read, f"arag-mcp reads no {name}"
            if "choices" in variable:
                assert set(variable["choices"]) == choices_of(name), name
                assert variable["default"] in variable["choices"]


def test_readme_carries_the_registry_ownership_line():
    """The registry finds `mcp-name: <name>` in the PyPI description (the README), not followed by more of a name."""
    name = server_json()["name"]
    assert re.search(rf"mcp-name: {re.escape(name)}(?=$|[^A-Za-z0-9._/-]|-->)", (REPO / "README.md").read_text())
    assert project()["readme"] == "README.md"


def test_the_image_carries_the_registry_label():
    dockerfile = (REPO / "Dockerfile").read_text()
    labels = re.findall(r'^LABEL io\.modelcontextprotocol\.server\.name="([^"]+)"$', dockerfile, re.MULTILINE)
    assert labels == [server_json()["name"]]


def test_the_bundle_installs_this_version():
    version = project()["version"]
    bundle_project = tomllib.loads((REPO / "bundle" / "pyproject.toml").read_text())["project"]
    assert bundle_manifest()["version"] == version
    assert bundle_project["dependencies"] == [f"{project()['name']}=={version}"]
    assert bundle_project["requires-python"] == project()["requires-python"]


def test_the_bundle_lists_the_default_profile_tools():
    assert [tool["name"] for tool in bundle_manifest()["tools"]] == list(PROFILES[DEFAULT_PROFILE].tool_names)


def test_the_bundle_passes_every_user_setting_to_a_variable_the_server_reads():
    manifest = bundle_manifest()
    config = manifest["server"]["mcp_config"]
    settings = manifest["user_config"]
    used = set(re.findall(r"\$\{user_config\.([a-z_]+)\}", json.dumps(config)))
    assert used == set(settings)
    assert set(config["env"]) <= server_variables()
    assert settings["index"]["type"] == "directory" and settings["index"]["required"]
    for variable, value in config["env"].items():
        (key,) = re.fullmatch(r"\$\{user_config\.([a-z_]+)\}", value).groups()
        if "default" in settings[key]:
            assert settings[key]["default"] in choices_of(variable), (key, settings[key]["default"])


def test_the_release_workflow_publishes_what_server_json_names():
    """The tag must name pyproject's version; the image pushed is the OCI package of server.json, at
    that version; the bundles packed are bundle/ and bundle/ with the wheel built."""
    import yaml

    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    jobs = workflow["jobs"]
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    [oci] = [package for package in server_json()["packages"] if package["registryType"] == "oci"]
    image = oci["identifier"].rsplit(":", 1)[0]
    [push] = [step for step in jobs["image"]["steps"] if step.get("uses", "").startswith("docker/build-push-action")]
    assert push["with"]["tags"] == image + ":${{ needs.test.outputs.version }}"
    assert push["with"]["platforms"] == "linux/amd64,linux/arm64"
    runs = [step.get("run", "") for step in jobs["bundle"]["steps"]]
    assert any("pack bundle" in run for run in runs)
    assert any(run.startswith("python bundle/pack_with_wheel.py --wheel dist/") for run in runs)
    assert any(step.get("run") == "bash .ci/run" for step in jobs["test"]["steps"])
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}


def test_every_package_folder_is_in_the_wheel():
    """setuptools is given the packages by name (the top-level folders map to arag_mcp.*): a folder
    left out of the list is missing from every install, though a clone runs it."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {package: Path(REPO, folder) for package, folder in setuptools["package-dir"].items()}
    found = {
        f"{package}.{'.'.join(init.parent.relative_to(folder).parts)}".rstrip(".")
        for package, folder in folders.items()
        for init in folder.rglob("__init__.py")
    }
    assert sorted(found) == sorted(setuptools["packages"])
