"""Fetching web pages and sites for sources, safely: fetch.py (one URL: SSRF guard, robots.txt, rate
limit, caps), extract.py (a page's main text as Markdown), site.py (a site's pages: sitemap or crawl).
Nothing here touches the database: the sources app's sync decides what becomes a document."""
