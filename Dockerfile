# arag-mcp serving an index over streamable HTTP (the base install: no torch).
#   docker build -t arag-mcp .
#   docker run -p 8000:8000 -v /path/to/idx:/index:ro -e ARAG_MCP_AUTH_TOKEN=<secret> arag-mcp
# It binds 0.0.0.0 inside the container, so it refuses to start without a bearer token.
# An MCP host can run it over stdio instead: docker run -i --rm -v /path/to/idx:/index:ro arag-mcp --transport stdio

FROM python:3.11-slim-bookworm AS build
COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /bin/uv
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never
WORKDIR /src
COPY pyproject.toml README.md ./
COPY indexer/ indexer/
COPY server/ server/
COPY agent/ agent/
RUN uv venv /opt/arag-mcp && uv pip install --no-cache --python /opt/arag-mcp/bin/python .

FROM python:3.11-slim-bookworm
LABEL io.modelcontextprotocol.server.name="io.github.arag-mcp/arag-mcp"
RUN useradd --system --uid 10001 --create-home arag
COPY --from=build /opt/arag-mcp /opt/arag-mcp
ENV PATH=/opt/arag-mcp/bin:$PATH \
    ARAG_MCP_INDEX=/index \
    ARAG_MCP_TRANSPORT=streamable-http \
    ARAG_MCP_HOST=0.0.0.0 \
    ARAG_MCP_PORT=8000
USER arag
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=4)" "http://127.0.0.1:${ARAG_MCP_PORT}/health"
ENTRYPOINT ["arag-mcp"]
