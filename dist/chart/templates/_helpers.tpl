{{/*
The prefix of every object's name: config/default's namePrefix unless fullnameOverride is set. An install that acts
in some namespaces only (watchNamespaces, watchNamespaceSelector) shares the cluster with others: its cluster-wide
objects (webhook configurations, ClusterRoles) are named after the release, <release>-cronjob-operator (as config/tenant's
<tenant>-cronjob-operator-...), or the release's name alone where it says cronjob-operator already or where that would be longer than
28 characters (the metrics Service's name, 28 + 35, must fit in 63).
*/}}
{{- define "cronjob-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trimSuffix "-" }}
{{- else if or .Values.watchNamespaces .Values.watchNamespaceSelector }}
{{- $name := printf "%s-%s" .Release.Name "cronjob-operator" }}
{{- if or (contains "cronjob-operator" .Release.Name) (gt (len $name) 28) }}
{{- $name = .Release.Name }}
{{- end }}
{{- $name | trunc 28 | trimSuffix "-" }}
{{- else }}
{{- "cronjob-operator" }}
{{- end }}
{{- end }}

{{/*
The webhooks' namespaceSelector: the namespaces of watchNamespaces by name, or watchNamespaceSelector as a
LabelSelector.
*/}}
{{- define "cronjob-operator.webhookNamespaceSelector" -}}
{{- if .Values.watchNamespaces -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: In
      values:
        {{- toYaml .Values.watchNamespaces | nindent 8 }}
{{- else if .Values.watchNamespaceSelector -}}
namespaceSelector:
  {{- include "cronjob-operator.labelSelector" .Values.watchNamespaceSelector | nindent 2 }}
{{- end -}}
{{- end }}

{{/*
A label selector in its string form (the manager's --watch-namespace-selector: "team=a,env in (x,y),!legacy") as a
LabelSelector: key=value and key==value in matchLabels; key!=value, key in (...), key notin (...), key and !key in
matchExpressions.
*/}}
{{- define "cronjob-operator.labelSelector" -}}
{{- $labels := dict }}
{{- $expressions := list }}
{{- range $term := regexFindAll "[^,(]+(\\([^)]*\\))?" . -1 }}
{{- $t := trim $term }}
{{- if regexMatch "^[^\\s!=()]+\\s+(in|notin)\\s+\\(.*\\)$" $t }}
{{- $key := regexReplaceAll "^([^\\s]+)\\s.*$" $t "${1}" }}
{{- $op := ternary "In" "NotIn" (regexMatch "^[^\\s]+\\s+in\\s" $t) }}
{{- $values := list }}
{{- range $v := splitList "," (regexReplaceAll "^[^(]*\\((.*)\\)$" $t "${1}") }}
{{- if trim $v }}{{- $values = append $values (trim $v) }}{{- end }}
{{- end }}
{{- $expressions = append $expressions (dict "key" $key "operator" $op "values" $values) }}
{{- else if regexMatch "^[^\\s!=]+\\s*!=" $t }}
{{- $parts := regexSplit "\\s*!=\\s*" $t 2 }}
{{- $expressions = append $expressions (dict "key" (index $parts 0) "operator" "NotIn" "values" (list (index $parts 1))) }}
{{- else if regexMatch "^[^\\s!=]+\\s*==?" $t }}
{{- $parts := regexSplit "\\s*==?\\s*" $t 2 }}
{{- $_ := set $labels (index $parts 0) (index $parts 1) }}
{{- else if hasPrefix "!" $t }}
{{- $expressions = append $expressions (dict "key" (trim (trimPrefix "!" $t)) "operator" "DoesNotExist") }}
{{- else }}
{{- $expressions = append $expressions (dict "key" $t "operator" "Exists") }}
{{- end }}
{{- end }}
{{- if $labels }}
matchLabels:
  {{- toYaml $labels | nindent 2 }}
{{- end }}
{{- if $expressions }}
matchExpressions:
  {{- toYaml $expressions | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Helm's standard labels, on every object (the selectors keep config/'s labels only, so they never change).
*/}}
{{- define "cronjob-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
