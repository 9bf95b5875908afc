{{/* The chart's name, or nameOverride. */}}
{{- define "ebs-analyzer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Objects are named release-chart, as the prometheus-community charts name them, with no
word said twice: a release that already holds the chart's name gives its own name (release
ebs-bottleneck-analyzer-prod), and a release that is the chart name's first word gives the
chart's name (release ebs: ebs-bottleneck-analyzer, not ebs-ebs-bottleneck-analyzer). */}}
{{- define "ebs-analyzer.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else if hasPrefix (printf "%s-" .Release.Name) $name }}
{{- $name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The selector labels: fixed for a release's life, so they hold no version. */}}
{{- define "ebs-analyzer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ebs-analyzer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ebs-analyzer.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "ebs-analyzer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: analyzer
app.kubernetes.io/part-of: ebs-bottleneck-analyzer
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ebs-analyzer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ebs-analyzer.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ebs-analyzer.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The Secret that holds the Slack webhook, if any. */}}
{{- define "ebs-analyzer.slackSecret" -}}
{{- if .Values.slack.existingSecret }}
{{- .Values.slack.existingSecret }}
{{- else if .Values.slack.webhookUrl }}
{{- printf "%s-slack" (include "ebs-analyzer.fullname" .) }}
{{- end }}
{{- end }}

{{/* The settings file: the settings map, with the chart's own values in their keys. */}}
{{- define "ebs-analyzer.settings" -}}
{{- $own := dict "region" "regions" "tag" "tags" "alertmanager_url" "alertmanager.urls" "rules" "rules" "slack_webhook_url" "slack.webhookUrl" "state_file" "persistence" "listen" "service.port" }}
{{- range $key, $value := $own }}
{{- if hasKey $.Values.settings $key }}
{{- fail (printf "settings.%s: set it with the chart's %s value instead" $key $value) }}
{{- end }}
{{- end }}
{{- $settings := deepCopy .Values.settings }}
{{- with .Values.regions }}{{ $_ := set $settings "region" . }}{{ end }}
{{- with .Values.tags }}{{ $_ := set $settings "tag" . }}{{ end }}
{{- with .Values.alertmanager.urls }}{{ $_ := set $settings "alertmanager_url" . }}{{ end }}
{{- if .Values.rules }}{{ $_ := set $settings "rules" (list "builtin" "/etc/ebs-analyzer/rules") }}{{ end }}
{{- $_ := set $settings "state_file" "/var/lib/ebs-analyzer/state.json" }}
{{- $_ := set $settings "listen" (printf "0.0.0.0:%d" (int .Values.service.port)) }}
{{- toYaml $settings }}
{{- end }}

{{/* The analyzer's pod: its metadata and spec. Takes (dict "root" $). */}}
{{- define "ebs-analyzer.podTemplate" -}}
{{- $root := .root }}
{{- with $root -}}
metadata:
  annotations:
    # A changed setting or rule restarts the pod.
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  labels:
    {{- include "ebs-analyzer.labels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "ebs-analyzer.serviceAccountName" . }}
  # Nothing calls the Kubernetes API; IRSA's token is mounted by EKS regardless.
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: analyzer
      image: {{ include "ebs-analyzer.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- with .Values.extraArgs }}
      args:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      env:
        - name: EBS_ANALYZER_CONFIG
          value: /etc/ebs-analyzer/config.yaml
        {{- if include "ebs-analyzer.slackSecret" . }}
        - name: SLACK_WEBHOOK_URL
          valueFrom:
            secretKeyRef:
              name: {{ include "ebs-analyzer.slackSecret" . }}
              key: {{ .Values.slack.existingSecretKey }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: metrics
          containerPort: {{ .Values.service.port }}
          protocol: TCP
      readinessProbe:
        httpGet:
          path: /readyz
          port: metrics
        initialDelaySeconds: 10
        periodSeconds: 15
        failureThreshold: 3
      # /livez fails once no cycle has ended for ten intervals (30 min at least): a
      # stuck scheduler or a hung cycle, which a restart mends.
      livenessProbe:
        httpGet:
          path: /livez
          port: metrics
        initialDelaySeconds: 10
        periodSeconds: 30
        failureThreshold: 3
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: state
          mountPath: /var/lib/ebs-analyzer
        - name: tmp
          mountPath: /tmp
        - name: config
          mountPath: /etc/ebs-analyzer/config.yaml
          subPath: config.yaml
          readOnly: true
        {{- if .Values.rules }}
        - name: rules
          mountPath: /etc/ebs-analyzer/rules
          readOnly: true
        {{- end }}
  volumes:
    - name: state
      {{- if .Values.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ default (include "ebs-analyzer.fullname" .) .Values.persistence.existingClaim }}
      {{- else }}
      emptyDir: {}
      {{- end }}
    - name: tmp
      emptyDir: {}
    - name: config
      configMap:
        name: {{ include "ebs-analyzer.fullname" . }}
    {{- if .Values.rules }}
    - name: rules
      configMap:
        name: {{ include "ebs-analyzer.fullname" . }}-rules
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}
