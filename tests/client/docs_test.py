"""The manual pages and completions the programs generate (--generate-docs), against the
programs' own --help (CLI11's rendering) and the tools that read them: groff renders the pages
without a warning; bash (with bash-completion) completes commands, options and, from
`nurllama list`, model names."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from pycheck import FAILS, check, finish, run  # noqa: E402


def help_commands(client):
    """{command: [aliases]} from CLI11's own --help ("  list, ls      List models")."""
    out = run([client, "--help"]).stdout
    if "Subcommands:" not in out:
        return {}
    found = re.findall(r"^  (\S+(?:, \S+)*)\s{2,}", out.split("Subcommands:", 1)[1], re.M)
    return {names.split(", ")[0]: names.split(", ")[1:] for names in found}


def complete(script, words, fake_list):
    """Runs the bash completion for `words` (the last one is being completed)."""
    prog = f"""
source /usr/share/bash-completion/bash_completion
source {script}
nurllama() {{ cat <<'LISTING'
{fake_list}LISTING
}}
COMP_WORDS=({' '.join(repr(w) for w in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE={' '.join(words)!r}
COMP_POINT=${{#COMP_LINE}}
_nurllama
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    return run(["bash", "-c", prog]).stdout.split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--daemon", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nurl-docs-") as tmp:
        docs = {}
        for prog, kind in ((args.client, "man"), (args.daemon, "man"), (args.client, "bash"),
                           (args.client, "zsh"), (args.client, "fish")):
            r = run([prog, f"--generate-docs={kind}"])
            check(r.returncode == 0 and r.stdout, f"{os.path.basename(prog)} --generate-docs={kind}")
            path = os.path.join(tmp, f"{os.path.basename(prog)}.{kind}")
            open(path, "w").write(r.stdout)
            docs[(os.path.basename(prog), kind)] = path
        r = run([args.client, "--generate-docs=pdf"])
        check(r.returncode != 0 and "man, bash, zsh or fish" in r.stderr, "an unknown kind is refused by name")

        cmds = help_commands(args.client)
        check(len(cmds) >= 10, f"--help lists the commands ({sorted(cmds)})")
        man = open(docs[("nurllama", "man")]).read()
        man_cmds = set(re.findall(r'^\.SS "nurllama (\S+)', man, re.M))
        check(man_cmds == set(cmds), f"nurllama(1) documents exactly the commands of --help (diff {sorted(man_cmds ^ set(cmds))})")
        check("logs" in man_cmds and "\\-\\-follow" in man, "nurllama(1) has the logs command and its options")
        aliases = {a for al in cmds.values() for a in al}
        check(all(f"\\fB{a}\\fR" in man for a in aliases), f"nurllama(1) names the aliases {sorted(aliases)}")
        dman = open(docs[("nurllamad", "man")]).read()
        check("\\-\\-host" in dman and "keep_alive" in dman and ".SH SIGNALS" in dman,
              "nurllamad(8) has the flags, the config keys and the signals")
        for name in ("nurllama", "nurllamad"):
            r = run(["groff", "-man", "-Tutf8", "-ww", "-z", docs[(name, "man")]])
            check(r.returncode == 0 and r.stderr.strip() == "", f"groff renders {name}'s page without warnings {r.stderr.strip()}")
            r = run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", docs[(name, "man")]])
            check(r.returncode == 0 and r.stderr.strip() == "", f"man -l {name}: no warnings {r.stderr.strip()}")

        bash = docs[("nurllama", "bash")]
        check(run(["bash", "-n", bash]).returncode == 0, "the bash completion parses")
        listing = "NAME            ID      SIZE    MODIFIED\nllama3:latest   abc     1 GB    now\nqwen:0.5b  def  400 MB  now\n"
        if os.path.exists("/usr/share/bash-completion/bash_completion"):
            check(set(complete(bash, ["nurllama", ""], listing)) >= set(cmds) | aliases,
                  "bash: every command and alias completes")
            check(complete(bash, ["nurllama", "cr"], listing) == ["create"], "bash: a prefix completes to its command")
            check("--follow" in complete(bash, ["nurllama", "logs", "--f"], listing), "bash: options of a command")
            got = complete(bash, ["nurllama", "show", ""], listing)
            check("llama3:latest" in got and "qwen:0.5b" in got, f"bash: model names from nurllama list ({got})")
            got = complete(bash, ["nurllama", "run", "llama3:latest", ""], listing)
            check("llama3:latest" not in got, "bash: the prompt of run is not completed as a model")
        else:
            check(False, "bash-completion is installed")
        zsh = open(docs[("nurllama", "zsh")]).read()
        check(zsh.startswith("#compdef nurllama") and all(f"'{c}:" in zsh for c in cmds), "zsh: #compdef and every command")
        fish = open(docs[("nurllama", "fish")]).read()
        check(all(f"-a {c} " in fish for c in cmds), "fish: every command")
    finish()


if __name__ == "__main__":
    main()
