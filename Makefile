# Everything a fresh machine needs: `make train` (the main job) and `make test` (the whole suite).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed

.PHONY: install train test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py package.json package-lock.json allfives_env/_fastobs.c allfives_env/_fastlook.c allfives_env/_fastargs.h allfives_env/_fastbits.h allfives_env/_fastview.h Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# CPU build of torch first, so nothing pulls a multi-GB CUDA build
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[train,onnx,play,web,bench,stacks,scale,dev]"
	# the JavaScript runtime's tests and the offline page: onnxruntime-web from package-lock.json, copied
	# into allfives/web/static/vendor/ (package.json's postinstall); skipped where npm is missing
	if command -v npm >/dev/null; then npm ci --no-audit --no-fund; fi
	touch $(STAMP)

RUN ?= runs/quickstart_2p_$(shell date +%Y%m%d-%H%M%S)

train: install
	$(BIN)/allfives train --config configs/quickstart_2p.yaml --run-dir $(RUN)

test: install
	$(BIN)/python -m pytest -n 2 tests

bench: install
	$(BIN)/python benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) build *.egg-info node_modules allfives/web/static/vendor
