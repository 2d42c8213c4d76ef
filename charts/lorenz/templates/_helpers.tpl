{{/* Chart name, overridable. */}}
{{- define "lorenz.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name of the release's objects: <release>-<chart> unless the release already says it. */}}
{{- define "lorenz.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "lorenz.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lorenz.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "lorenz.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "lorenz.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: lorenz
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "lorenz.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "lorenz.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The operator image: repository@digest when a digest is given, else repository:tag. */}}
{{- define "lorenz.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The image run Pods copy the runner from: the operator image unless overridden. */}}
{{- define "lorenz.runnerImage" -}}
{{- default (include "lorenz.image" .) .Values.runnerImage -}}
{{- end -}}

{{/* "true" when the controller must elect a leader. */}}
{{- define "lorenz.leaderElect" -}}
{{- if or .Values.leaderElection.enabled (gt (int (include "lorenz.replicas" .)) 1) -}}true{{- end -}}
{{- end -}}

{{/* The generated RBAC rules (files/rbac-rules.yaml, written by hack/sync-chart.ts). */}}
{{- define "lorenz.rbacRules" -}}
{{- .Files.Get "files/rbac-rules.yaml" -}}
{{- end -}}

{{/* The archive is a SQLite file (on the chart's volume when persistence is on). */}}
{{- define "lorenz.archiveSqlite" -}}
{{- if and (not .Values.archive.dsnSecretRef.name) (hasPrefix "sqlite:" .Values.archive.dsn) -}}true{{- end -}}
{{- end -}}

{{/* Replicas: one with a SQLite archive (one writer to the file), else replicaCount. */}}
{{- define "lorenz.replicas" -}}
{{- if include "lorenz.archiveSqlite" . -}}1{{- else -}}{{ .Values.replicaCount }}{{- end -}}
{{- end -}}

{{/* The web view server's Pods: their own component, so the controller's Services never select them. */}}
{{- define "lorenz.serverSelectorLabels" -}}
app.kubernetes.io/name: {{ include "lorenz.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "lorenz.serverLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "lorenz.serverSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: lorenz
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
