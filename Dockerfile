# The ome-operator image. Until the operator itself lands, it carries the decision core and the
# kubectl-ome plugin.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
RUN pip install --no-cache-dir . && rm -rf /src
USER 65532:65532
ENTRYPOINT ["kubectl-ome"]
