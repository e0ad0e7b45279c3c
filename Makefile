# The two commands the README promises: `make book` and `make test`.
# Both create .venv/ on first use and install the project from this checkout.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: book test notebooks teacher-book clean bench pdf pdf-teacher

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

clean:
	rm -rf _build
