# The ome-operator image: `ome-operator run`, with the kubectl-ome plugin beside it.
#
#   docker build -t ome-operator:0.1.0 .      # the tag manifests/kustomization.yaml names
#
# Two stages: the first builds wheels of the project and its dependencies; the final one only
# installs them (no compiler, no pip, no wheel cache left) and runs as a non-root user. The root
# filesystem can be read-only: Python writes no bytecode, and the managed webhook certificate
# goes to /tmp (an emptyDir in manifests/operator/deployment.yaml).
FROM python:3.11.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels "ome-operator==0.1.0" \
    && rm -rf /wheels \
    && pip uninstall --yes pip setuptools wheel
USER 65532:65532
WORKDIR /
EXPOSE 8080 8081 9443
ENTRYPOINT ["ome-operator"]
CMD ["run"]
