# The two commands the README promises: `make book` and `make test`.
# Both create .venv/ on first use and install the project from this checkout.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: book test test-min check lint notebooks teacher-book clean bench reference-measurement pdf pdf-teacher

$(STAMP): pyproject.toml requirements-lock.txt
	@$(PYTHON) tools/check_python.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c requirements-lock.txt -e ".[book,test]"
	@touch $(STAMP)

## Build the HTML book into _build/html, executing every notebook.
book: $(STAMP)
	$(BIN)/python tools/build_book.py

## Run the whole test suite.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup

## The fast core tests against the LOWEST versions pyproject.toml allows (numpy 1.24, sympy 1.12,
## matplotlib 3.7, ipywidgets 7.7 as in Colab, threadpoolctl 3.1), in a throwaway venv (~1-2 min).
test-min:
	$(PYTHON) tools/test_min_versions.py

## The fast tier: lint, types and every test that needs neither a book build nor a browser
## (a few minutes on 2 cores; markers in pyproject.toml, tiers in CONTRIBUTING.md).
check: lint
	$(BIN)/python -m pytest -n 2 -m "not slow and not browser"

## Lint, format and types (ruff and mypy settings in pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## Regenerate the output-free .ipynb twins of every .md notebook (and their Colab setup cell);
## the numbers in their prose come from the last `make book` (_build/jupyter_execute).
notebooks: $(STAMP)
	$(BIN)/python tools/notebooks.py sync

## The book without solutions, for teachers to hand out (into _build/teacher/_build/html).
teacher-book: $(STAMP)
	$(BIN)/python tools/build_book.py --no-solutions

## The printed edition: one PDF of the whole book (headless Chromium prints each page of
## _toc.yml with the print stylesheet: no solutions, no answer boxes), _build/rooflines.pdf.
pdf: book
	$(BIN)/python tools/book_pdf.py --html _build/html --out _build/rooflines.pdf

## The same from the teacher's book (built without solutions), _build/rooflines-teacher.pdf.
pdf-teacher: teacher-book
	$(BIN)/python tools/book_pdf.py --html _build/teacher/_build/html --out _build/rooflines-teacher.pdf

## Performance figures (build time, import time, widget and checker latency).
bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

## Chapter 9's stored example: measure this machine (run it with nothing else running).
reference-measurement: $(STAMP)
	$(BIN)/python tools/measure_reference.py

clean:
	rm -rf _build
