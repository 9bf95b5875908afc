# ebs-bottleneck-analyzer: the daemon (`ebs-analyzer run`), small and non-root.
#   docker build -t ebs-bottleneck-analyzer:0.1.0 .
#   docker run -p 9877:9877 -e AWS_REGION=us-east-1 ebs-bottleneck-analyzer:0.1.0
# The tag and the version label are the package's version (pyproject.toml), which the Helm
# chart's appVersion and the Kubernetes base name too; tests/deploy holds them together.
# EXTRAS: the extras installed; the default carries the Kubernetes client (a claim's fix through
# its claim); kubernetes,demo adds what `ebs-analyzer demo` needs (see deploy/docker-compose.yml).

ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG EXTRAS="kubernetes"
WORKDIR /src
COPY pyproject.toml README.md ./
COPY analyzer ./analyzer
COPY rules ./rules
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check ".${EXTRAS:+[$EXTRAS]}"

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="ebs-bottleneck-analyzer" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.description="Warns before an EBS volume's or an EC2 instance's storage limit holds a workload back."
COPY --from=build /opt/venv /opt/venv
RUN useradd --system --uid 10001 --home-dir /var/lib/ebs-analyzer --shell /usr/sbin/nologin analyzer \
    && mkdir -p /var/lib/ebs-analyzer \
    && chown 10001:10001 /var/lib/ebs-analyzer
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    EBS_ANALYZER_STATE_FILE=/var/lib/ebs-analyzer/state.json
USER 10001:10001
WORKDIR /var/lib/ebs-analyzer
EXPOSE 9877
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9877/healthz', timeout=4)"]
ENTRYPOINT ["ebs-analyzer", "run"]
