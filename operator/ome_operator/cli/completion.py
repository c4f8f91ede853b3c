"""``kubectl-ome completion bash|zsh``: shell completion scripts generated from the parser.

The parser is the one source of the words: a script holds, for every command path (``""``,
``"runtime"``, ``"runtime explain"``...), its subcommands, the choices of its positional
arguments, its flags and the flags that take a value. The shell walks the words typed so far
with that table, skipping flag values, and offers the subcommands (or positional choices) of
the command reached, or its flags when the word starts with ``-`` or nothing else is left.
A flag's value completes to the words ``offer`` gave its action (``-o``: the output formats),
else it is left to the shell (file names).

The bash script also answers kubectl's plugin completion: run as an executable named
``kubectl_complete-ome`` (kubectl 1.26+ calls it with the words after ``kubectl ome``), it
prints one completion a line and Cobra's directive line (``:4`` no file completion, ``:0``
the shell's default).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from .commands import SHELLS, offer

__all__ = ["SHELLS", "CommandNode", "command_tree", "completion_script", "offer"]

#: Words go unquoted into ``case`` lists and ``compgen -W``: nothing a shell would expand.
_WORD = re.compile(r"^-{0,2}[A-Za-z0-9][A-Za-z0-9_.-]*=?$")


@dataclass(frozen=True)
class CommandNode:
    """What completes after one command path."""

    path: str  #: the subcommands from the program on, space-separated; ``""`` for the program
    commands: tuple[str, ...]  #: its subcommands
    values: tuple[str, ...]  #: the choices of its positional arguments
    flags: tuple[str, ...]  #: every option string
    valued: tuple[str, ...]  #: the option strings that take a value
    #: ``(option string, words)``: what the value of an option completes to
    offered: tuple[tuple[str, tuple[str, ...]], ...] = ()


def command_tree(parser: argparse.ArgumentParser) -> list[CommandNode]:
    """Every command path of ``parser``, parents before children, in declaration order."""
    nodes: list[CommandNode] = []
    _walk(parser, "", nodes)
    return nodes


def _walk(parser: argparse.ArgumentParser, path: str, nodes: list[CommandNode]) -> None:
    commands: list[str] = []
    values: list[str] = []
    flags: list[str] = []
    valued: list[str] = []
    offered: list[tuple[str, tuple[str, ...]]] = []
    children: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:  # hidden from the help, so from completion too
            continue
        if isinstance(action, argparse._SubParsersAction):
            children.extend(action.choices.items())
            commands.extend(action.choices)
        elif action.option_strings:
            flags.extend(action.option_strings)
            if action.nargs != 0:
                valued.extend(action.option_strings)
            words = getattr(action, "completions", ())
            offered.extend((option, words) for option in action.option_strings if words)
        elif action.choices:
            values.extend(str(choice) for choice in action.choices)
    lists = map(tuple, (commands, values, flags, valued))
    nodes.append(CommandNode(path, *lists, tuple(offered)))
    for name, child in children:
        _walk(child, f"{path} {name}".strip(), nodes)


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell`` (one of SHELLS)."""
    template = {"bash": _BASH, "zsh": _ZSH}[shell]
    nodes = command_tree(parser)
    return template.replace("@NODES@", _node_function(nodes) + "\n\n" + _offered_function(nodes))


def _node_function(nodes: list[CommandNode]) -> str:
    """``_kubectl_ome_node PATH``: sets the caller's commands, values, flags and valued."""
    cases = []
    for node in nodes:
        lists = (node.commands, node.values, node.flags, node.valued)
        assignments = [
            f'{name}="{_words(words)}"'
            for name, words in zip(("commands", "values", "flags", "valued"), lists, strict=True)
        ]
        body = "\n".join(f"            {line}" for line in assignments)
        cases.append(f'        "{node.path}")\n{body}\n            ;;')
    return (
        "_kubectl_ome_node() {\n"
        '    commands="" values="" flags="" valued=""\n'
        '    case "$1" in\n' + "\n".join(cases) + "\n    esac\n}"
    )


def _offered_function(nodes: list[CommandNode]) -> str:
    """``_kubectl_ome_offered PATH FLAG``: sets the caller's offered to the flag's words."""
    cases = [
        f'        "{node.path}|{option}") offered="{_words(words)}" ;;'
        for node in nodes
        for option, words in node.offered
    ]
    return (
        "_kubectl_ome_offered() {\n"
        '    offered=""\n'
        '    case "$1|$2" in\n' + "\n".join(cases) + "\n    esac\n}"
    )


def _words(words: tuple[str, ...]) -> str:
    for word in words:
        if not _WORD.match(word):
            raise ValueError(f"cannot complete {word!r}: not a plain command or flag word")
    return " ".join(words)


#: The walk over the typed words, the same in bash and zsh (``$i`` is the first word after
#: the program, ``$last`` the index of the word being completed).
_WALK = """\
    _kubectl_ome_node ""
    while [ "$i" -lt "$last" ]; do
        word="${@WORDS@[i]}"
        case "$word" in
            -*=*) ;;
            -*)
                case " $valued " in
                    *" $word "*)
                        if [ $((i + 1)) -eq "$last" ]; then valueof="$word"; fi
                        i=$((i + 1))
                        ;;
                esac
                ;;
            *)
                case " $commands " in
                    *" $word "*)
                        node="${node:+$node }$word"
                        _kubectl_ome_node "$node"
                        ;;
                    *)
                        case " $values " in *" $word "*) values="" ;; esac
                        ;;
                esac
                ;;
        esac
        i=$((i + 1))
    done"""

_BASH = (
    """\
#!/usr/bin/env bash
# bash completion for kubectl-ome, generated from its argument parser by
# `kubectl-ome completion bash`.
#
#   kubectl-ome ...:  source <(kubectl-ome completion bash)   (e.g. in ~/.bashrc)
#   kubectl ome ...:  save this script as an executable named kubectl_complete-ome on PATH;
#                     kubectl (1.26+) runs it to complete the plugin, in every shell it completes.

@NODES@

_kubectl_ome() {
    local cur="${COMP_WORDS[COMP_CWORD]}" last="$COMP_CWORD" word="" node="" valueof="" i=1
    local commands="" values="" flags="" valued="" candidates="" offered=""
    COMPREPLY=()
"""
    + _WALK.replace("@WORDS@", "COMP_WORDS")
    + """
    if [ -n "$valueof" ]; then
        _kubectl_ome_offered "$node" "$valueof"
        if [ -n "$offered" ]; then
            COMPREPLY=($(compgen -W "$offered" -- "$cur"))
        fi
        return 0 # else a flag's value: the shell's default completion (file names)
    fi
    if [[ $cur == -* ]] || [ -z "$commands$values" ]; then
        candidates="$flags"
    else
        candidates="$commands $values"
    fi
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    # run as kubectl_complete-ome: kubectl passes the words after `kubectl ome`, the last one
    # being completed, and reads one completion a line and then Cobra's directive
    COMP_WORDS=(kubectl-ome "$@")
    COMP_CWORD=$#
    _kubectl_ome
    if [ "${#COMPREPLY[@]}" -eq 0 ]; then
        echo ":0"
    else
        printf '%s\\n' "${COMPREPLY[@]}"
        echo ":4"
    fi
else
    complete -o default -F _kubectl_ome kubectl-ome
fi
"""
)

_ZSH = (
    """\
#compdef kubectl-ome
# zsh completion for kubectl-ome, generated from its argument parser by
# `kubectl-ome completion zsh`.
#
#   kubectl-ome ...:  save this script as _kubectl-ome in a directory of $fpath, or source it
#                     after compinit: source <(kubectl-ome completion zsh)
#   kubectl ome ...:  kubectl's own zsh completion runs kubectl_complete-ome: see
#                     `kubectl-ome completion --help`.

@NODES@

_kubectl_ome() {
    local cur="${words[CURRENT]}" last="$CURRENT" word="" node="" valueof="" i=2
    local commands="" values="" flags="" valued="" offered=""
    local -a candidates
"""
    + _WALK.replace("@WORDS@", "words")
    + """
    if [ -n "$valueof" ]; then
        _kubectl_ome_offered "$node" "$valueof"
        if [ -n "$offered" ]; then
            candidates=(${=offered})
            compadd -- "${candidates[@]}"
        else
            _files # a flag's value: file names
        fi
        return
    fi
    if [[ $cur == -* || -z "$commands$values" ]]; then
        candidates=(${=flags})
    else
        candidates=(${=commands} ${=values})
    fi
    compadd -- "${candidates[@]}"
}

if [ "$funcstack[1]" = "_kubectl-ome" ]; then
    _kubectl_ome "$@"
else
    compdef _kubectl_ome kubectl-ome
fi
"""
)
