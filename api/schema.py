"""GET /api/schema/: the OpenAPI schema, JSON first so that a browser shows it instead of
downloading a file (`?format=yaml`, or `Accept: application/vnd.oai.openapi`, for YAML)."""

from __future__ import annotations

from drf_spectacular.renderers import (
    OpenApiJsonRenderer,
    OpenApiJsonRenderer2,
    OpenApiYamlRenderer,
    OpenApiYamlRenderer2,
)
from drf_spectacular.views import SpectacularAPIView


class SchemaView(SpectacularAPIView):
    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer, OpenApiYamlRenderer, OpenApiYamlRenderer2]
