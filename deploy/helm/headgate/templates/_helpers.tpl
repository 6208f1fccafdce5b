{{/* The chart's name, at most 63 characters (a DNS label). */}}
{{- define "headgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object's name: the release name, plus the chart's name
when the release name does not already contain it.
*/}}
{{- define "headgate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "headgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels every object carries. */}}
{{- define "headgate.labels" -}}
helm.sh/chart: {{ include "headgate.chart" . }}
{{ include "headgate.selectorLabels" . }}
app.kubernetes.io/version: {{ (default .Chart.AppVersion .Values.image.tag) | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: headgate
{{- end }}

{{/* The labels that select the serving pods; never change them in an upgrade (selectors are immutable). */}}
{{- define "headgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "headgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "headgate.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The ConfigMap with headgate.toml: the chart's or the user's. */}}
{{- define "headgate.configMapName" -}}
{{- if .Values.config.existingConfigMap }}
{{- .Values.config.existingConfigMap }}
{{- else }}
{{- printf "%s-config" (include "headgate.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The volume source of a file set (tables or botRanges): one of files (the
chart's ConfigMap <fullname>-<suffix>), existingConfigMap or volume, or
nothing. Called with (list $ .Values.tables "tables").
*/}}
{{- define "headgate.fileSetSource" -}}
{{- $root := index . 0 }}{{ $set := index . 1 }}{{ $key := index . 2 }}
{{- $n := 0 }}
{{- if $set.files }}{{ $n = add1 $n }}{{ end }}
{{- if $set.existingConfigMap }}{{ $n = add1 $n }}{{ end }}
{{- if $set.volume }}{{ $n = add1 $n }}{{ end }}
{{- if gt $n 1 }}
{{- fail (printf "%s: set one of files, existingConfigMap and volume, not %d" $key $n) }}
{{- end }}
{{- if $set.files }}
configMap:
  name: {{ printf "%s-%s" (include "headgate.fullname" $root) ($key | kebabcase) }}
{{- else if $set.existingConfigMap }}
configMap:
  name: {{ $set.existingConfigMap }}
{{- else if $set.volume }}
{{- toYaml $set.volume }}
{{- end }}
{{- end }}

{{/* The config volume and the file sets' volumes, for a pod's volumes list. */}}
{{- define "headgate.volumes" -}}
- name: headgate-config
  configMap:
    name: {{ include "headgate.configMapName" . }}
{{- range $key := list "tables" "botRanges" }}
{{- $src := include "headgate.fileSetSource" (list $ (index $.Values $key) $key) }}
{{- if $src }}
- name: {{ $key | kebabcase }}
  {{- $src | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/* The mounts of headgate.volumes, all read-only; never subPath (such files never update). */}}
{{- define "headgate.volumeMounts" -}}
- name: headgate-config
  mountPath: /etc/headgate
  readOnly: true
{{- range $key := list "tables" "botRanges" }}
{{- $set := index $.Values $key }}
{{- if or $set.files $set.existingConfigMap $set.volume }}
- name: {{ $key | kebabcase }}
  mountPath: {{ $set.mountPath }}
  readOnly: true
{{- end }}
{{- end }}
{{- end }}

{{/* The checksum that rolls the pods when the chart's config or files change. */}}
{{- define "headgate.checksum" -}}
{{- $parts := list }}
{{- if not .Values.config.existingConfigMap }}{{ $parts = append $parts .Values.config.inline }}{{ end }}
{{- $parts = append $parts (toJson .Values.tables.files) }}
{{- $parts = append $parts (toJson .Values.botRanges.files) }}
{{- join "\n" $parts | sha256sum }}
{{- end }}
