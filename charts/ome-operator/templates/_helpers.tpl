{{/*
The names are those of manifests/, cluster-scoped ones included (the ClusterRoles, their
bindings, the ValidatingWebhookConfiguration): one release per cluster, as one kustomize install.
*/}}

{{/* The labels of every object the chart makes: manifests/' own, and Helm's. */}}
{{- define "ome-operator.labels" -}}
app.kubernetes.io/name: ome-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The operator image: repository@digest, else repository:tag (the appVersion by default). */}}
{{- define "ome-operator.image" -}}
{{- with .Values.image -}}
{{- if .digest -}}
{{ .repository }}@{{ .digest }}
{{- else -}}
{{ .repository }}:{{ .tag | default $.Chart.AppVersion }}
{{- end -}}
{{- end -}}
{{- end }}

{{/* The ServiceAccount the operator runs as, the subject of every binding. */}}
{{- define "ome-operator.subject" -}}
- kind: ServiceAccount
  name: ome-operator
  namespace: {{ .Release.Namespace }}
{{- end }}
