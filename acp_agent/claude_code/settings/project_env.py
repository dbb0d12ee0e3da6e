"""The variables a project's `env` never sets, trusted or not.

A settings file's `env` reaches the environment of every hook (the user's own too) and the
`${VAR}` expansion of the MCP servers. From a project's file it waits for trust (`trust.py`), and
the variables below are never taken from one at all (each skipped with a warning that names it):
they make a program run code that no command line names, before anything can check it. Trusting
a folder is trusting the hooks and servers the question lists, not every program they start.

- the dynamic loader (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, …; macOS's `DYLD_*`): a
  library loaded into every process, bwrap itself included, before any sandbox exists;
- shell start-up (`BASH_ENV`, `ENV`, `PROMPT_COMMAND`, `BASH_FUNC_*` functions, `SHELLOPTS`,
  `BASHOPTS`, `PS4`, `ZDOTDIR`): a script every shell sources, or a command it runs;
- interpreter start-up: Python's `PYTHONSTARTUP`, `PYTHONPATH`, `PYTHONHOME`, `PYTHONUSERBASE`
  (`sitecustomize` and `usercustomize` run at every start), `PYTHONWARNINGS` and
  `PYTHONBREAKPOINT` (they import what they name); `PERL5OPT`, `PERL5LIB`, `PERLLIB`, `PERL5DB`;
  `RUBYOPT`, `RUBYLIB`; `NODE_OPTIONS` (`--require`), `NODE_PATH`; the JVM's
  `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS` (`-javaagent`);
- git's own variables, all `GIT_*` (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` and
  `GIT_CONFIG_PARAMETERS` inject config such as `core.fsmonitor`; `GIT_DIR` points git at a
  repository's planted config; `GIT_SSH_COMMAND`, `GIT_PAGER`, `GIT_EXEC_PATH` name programs);
- where programs are found and where they read their configuration: `PATH` (a repository's
  `bin/git` in front), `HOME`, `XDG_CONFIG_HOME`, `XDG_CONFIG_DIRS`, `XDG_DATA_HOME`
  (`~/.gitconfig`, `~/.bashrc` read from the repository instead), `CLAUDE_CONFIG_DIR`;
- programs other programs run by name: `PAGER`, `MANPAGER`, `GIT_PAGER`, `EDITOR`, `VISUAL`,
  `BROWSER`, `SHELL`, `LESSOPEN`, `LESSCLOSE` (less runs them on every file), `SSH_ASKPASS`,
  `SUDO_ASKPASS`.

The user's own files (`~/.claude/settings.json`, acp-agent's, a local file that is the user's)
may set any of them: they are the user's word.
"""

from __future__ import annotations

__all__ = ["STARTUP_PREFIXES", "STARTUP_VARIABLES", "never_from_project"]

STARTUP_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_")
STARTUP_VARIABLES = frozenset(
    {"BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4", "ZDOTDIR"}
    | {"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONBREAKPOINT"}
    | {"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH"}
    | {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"}
    | {"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR"}
    | {"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SHELL", "LESSOPEN", "LESSCLOSE"}
    | {"SSH_ASKPASS", "SUDO_ASKPASS"}
)


def never_from_project(name: str) -> bool:
    """Whether a project's `env` may never set `name` (see the module's docstring for why)."""
    return name in STARTUP_VARIABLES or name.startswith(STARTUP_PREFIXES)
