from django import template
from django.utils.safestring import SafeString

from chat.answering.citations import chunk_range_label
from chat.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """{{ text|markdown }}: Markdown rendered as sanitized HTML."""
    return render_markdown(text)


@register.filter
def chunk_range(citation: dict) -> str:
    """"chunk 4" or "chunks 4–6" for a citation's [start, end) chunk range."""
    return chunk_range_label(citation["start"], citation["end"])
