#!/usr/bin/env bash
# parity-venv: the Python environment of `make parity` in .cache/parity, with
# the peers this project is checked against, pinned:
#   torch 2.11.0 (the version on the GPU machines this project is lent; PyPI's
#   Linux wheel is a CUDA build that also runs on the CPU), transformers 5.17.0,
#   tokenizers, safetensors, gguf (llama.cpp's reference GGUF reader and
#   writer), accelerate and jinja2 (which transformers' GGUF loading and
#   chat templates need), llama-cpp-python (llama.cpp itself, compiled at
#   install: about 5 minutes on 2 cores, so its wheel is kept in
#   .cache/wheels and a new venv installs it from there), and verl 0.9.1
#   without its heavy dependencies
#   (--no-deps; then only what verl.trainer.ppo.core_algos imports: ray and
#   tensordict through verl/__init__ → verl.protocol, omegaconf in core_algos,
#   codetiming in verl.utils.profiler; ray is ~220 MB installed and used only
#   by that import, none of the math the parity tests call); and peft 0.21.2
#   (HuggingFace PEFT, the LoRA reference), which came later: it has a stamp
#   of its own, so a venv built before it gets it by one pip install rather
#   than a rebuild (and llama-cpp-python's compile).
# Idempotent: a stamp with the pinned list makes a second run a no-op. Prints
# the venv's python on standard output.
#
# Disk: torch's Linux wheel pulls the CUDA libraries (nvidia-*, triton), so
# the venv is about 5.2 GB installed, and pip holds the ~3 GB of downloaded
# wheels until it has installed them. pip runs with --no-cache-dir, so no
# second copy of those wheels stays behind in ~/.cache/pip; a failed install
# says how much disk was free, and the next run starts the venv over (the
# stamp is written last).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.cache/parity"
need_gb=9
# free_gb prints the free space, in whole GB, of the file system holding .cache.
free_gb() { df -Pk "$root/.cache" | awk 'NR==2 {print int($4/1048576)}'; }
# pipi runs pip install in the venv; when it fails it names the disk's state.
pipi() {
	if ! "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir "$@" >&2; then
		echo "parity-venv: pip could not install $* into $venv ($(free_gb) GB free on the disk holding .cache; the venv needs about $need_gb GB while it installs)" >&2
		exit 1
	fi
}
pins=(torch==2.11.0 transformers==5.17.0 tokenizers==0.23.3 safetensors==0.8.0 numpy==2.4.6 pytest==8.4.2
	gguf==0.19.0 accelerate==1.16.0 jinja2==3.1.6)
llama=llama-cpp-python==0.3.36
verl=(verl==0.9.1)
verl_deps=(ray==2.55.1 tensordict==0.10.0 omegaconf==2.3.0 codetiming==1.4.0)
peft=peft==0.21.2
want="${pins[*]} | ${verl[*]} | ${verl_deps[*]} | $llama"
# add_peft installs peft into a venv that has the pins, once (stamp .peft).
add_peft() {
	if [ "$(cat "$venv/.peft" 2>/dev/null)" != "$peft" ]; then
		echo "parity-venv: installing $peft into $venv" >&2
		pipi "$peft"
		echo "$peft" > "$venv/.peft"
	fi
}
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins" 2>/dev/null)" = "$want" ]; then
	add_peft
	echo "$venv/bin/python"
	exit 0
fi
command -v python3 >/dev/null || { echo "parity-venv: python3 not found; install Python >= 3.10 with venv and pip" >&2; exit 1; }
echo "parity-venv: installing ${pins[*]} ${verl[*]} ${verl_deps[*]} into $venv" >&2
mkdir -p "$root/.cache"
if [ "$(free_gb)" -lt "$need_gb" ]; then
	echo "parity-venv: warning: $(free_gb) GB free on the disk holding .cache, and the venv needs about $need_gb GB while it installs" >&2
fi
rm -rf "$venv"
python3 -m venv "$venv" >&2
pipi "${pins[@]}"
pipi --no-deps "${verl[@]}"
if [ ${#verl_deps[@]} -gt 0 ]; then
	pipi "${verl_deps[@]}"
fi
# llama-cpp-python builds llama.cpp from source (CPU only, its default);
# the wheel is built once into .cache/wheels.
wheels="$root/.cache/wheels"
if ! ls "$wheels"/llama_cpp_python-"${llama#*==}"-*.whl >/dev/null 2>&1; then
	echo "parity-venv: building $llama (compiles llama.cpp: about 5 minutes on 2 cores)" >&2
	"$venv/bin/pip" wheel -q --disable-pip-version-check --no-cache-dir --no-deps -w "$wheels" "$llama" >&2
fi
pipi --find-links "$wheels" "$llama"
echo "$want" > "$venv/.pins"
add_peft
echo "$venv/bin/python"
