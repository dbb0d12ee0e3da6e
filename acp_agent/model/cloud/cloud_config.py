"""What the cloud command-line tools' own files say, read as Claude Code reads them: an AWS
profile's region (its credentials file, then its config file) and a Google Cloud project (a
service account's credentials file, then gcloud's configuration).

Apart from `platforms.py` because it is file reading, not choosing: the choice stays a pure
function of one mapping, and what it looks up on disk is here, each reader bounded and quiet
(an absent, unreadable or malformed file is no answer, never an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["aws_profile_region", "credentials_file_project", "gcloud_project", "plausible_region"]

_MAX_JSON_BYTES = 1_000_000


def plausible_region(value: str) -> bool:
    """A region name: no `/`, `.` or space (what Claude Code takes as unset otherwise)."""
    return not any(c in value for c in "/. ")


def aws_profile_region(env: Mapping[str, str], profile: str | None) -> tuple[str, str] | None:
    """The `region` of `profile` (or `default`), and where it was found: the shared credentials
    file, then the config file (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`, else `~/.aws`)."""
    home = env.get("HOME", "")
    wanted = profile or "default"
    files = (
        (env.get("AWS_SHARED_CREDENTIALS_FILE") or (home and f"{home}/.aws/credentials"), wanted),
        (env.get("AWS_CONFIG_FILE") or (home and f"{home}/.aws/config"), _config_section(wanted)),
    )
    for path, section in files:
        if not path:
            continue
        found = _ini_value(Path(path), section, "region")
        if found and plausible_region(found):
            return found, f"profile {wanted} in {path}"
    return None


def credentials_file_project(path: Path) -> str | None:
    """A Google credentials file's `project_id`, else its `quota_project_id`."""
    return _json_field(path, "project_id") or _json_field(path, "quota_project_id")


def gcloud_project(env: Mapping[str, str]) -> str | None:
    """The project of gcloud's default configuration (`CLOUDSDK_CONFIG`, else `~/.config/gcloud`)."""
    config_dir = env.get("CLOUDSDK_CONFIG") or (env.get("HOME") and f"{env['HOME']}/.config/gcloud")
    if not config_dir:
        return None
    return _ini_value(Path(config_dir) / "configurations" / "config_default", "core", "project")


def _config_section(profile: str) -> str:
    return profile if profile == "default" else f"profile {profile}"


def _ini_value(path: Path, section: str, key: str) -> str | None:
    import configparser  # only on the AWS and Google paths: start-up never pays for it

    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    try:
        return parser.get(section, key).strip() or None
    except (configparser.Error, KeyError):
        return None


def _json_field(path: Path, name: str) -> str | None:
    import json

    try:
        if path.stat().st_size > _MAX_JSON_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None
