#!/bin/sh
# Rebuilds files/ from sources/ with Debian's producers (chromium, libreoffice-writer-nogui,
# libreoffice-calc-nogui, groff, man-db). The committed files are what the suite scores: rebuild only
# to add a document or a producer, and check the expected text again after.
set -eu
cd "$(dirname "$0")"
mkdir -p files
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --no-pdf-header-footer --print-to-pdf=files/guide-chromium.pdf sources/guide.html 2>/dev/null
cp sources/guide.html files/guide.html
soffice --headless --convert-to pdf:writer_web_pdf_Export --outdir "$out" sources/guide.html >/dev/null
cp "$out/guide.pdf" files/guide-libreoffice.pdf
for target in pdf docx odt; do
    soffice --headless --convert-to "$target" --outdir "$out" sources/notice.fodt >/dev/null
    cp "$out/notice.$target" "files/notice-libreoffice.$target"
done
MANWIDTH=80 man -l sources/pinning.7 2>/dev/null | col -b > files/pinning-man.txt
MANWIDTH=80 man -l sources/ferries.1 2>/dev/null | col -b > files/ferries-man.txt
groff -man -Tpdf sources/pinning.7 > files/pinning-groff.pdf
groff -ms -Tpdf sources/memo.ms > files/memo-groff.pdf
cp sources/notes.md files/notes.md
cp sources/loans.csv files/loans.csv
soffice --headless --convert-to xlsx --outdir "$out" sources/loans.csv >/dev/null
cp "$out/loans.xlsx" files/loans-libreoffice.xlsx
# A "scan": the page as pixels, words set close (OCR runs some together).
chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --window-size=980,180 \
    --screenshot="$PWD/files/scan-chromium.png" sources/scan.html 2>/dev/null
