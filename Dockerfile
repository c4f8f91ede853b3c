# The ome-operator image: `ome-operator run` (kopf) with the kubectl-ome plugin alongside.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
RUN pip install --no-cache-dir . && rm -rf /src
WORKDIR /
USER 65532:65532
EXPOSE 8080 8081 9443
ENTRYPOINT ["ome-operator"]
CMD ["run"]
