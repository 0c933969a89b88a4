from django import template
from django.utils.safestring import SafeString

from chat.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """{{ text|markdown }}: Markdown rendered as sanitized HTML."""
    return render_markdown(text)
