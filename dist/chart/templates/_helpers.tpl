{{/*
The prefix of every object's name: config/default's namePrefix unless fullnameOverride is set.
*/}}
{{- define "cronjob-operator.fullname" -}}
{{- default "cronjob-operator" .Values.fullnameOverride | trimSuffix "-" -}}
{{- end }}

{{/*
Helm's standard labels, on every object (the selectors keep config/'s labels only, so they never change).
*/}}
{{- define "cronjob-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
