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

{{/* Whether the analyzer runs as one StatefulSet a shard: more than one shard, or more
than one replica of each. One shard of one replica is the Deployment. */}}
{{- define "ebs-analyzer.sharded" -}}
{{- if or (gt (int .Values.shards) 1) (gt (int .Values.replicasPerShard) 1) }}true{{ end }}
{{- end }}

{{/* Shard i's StatefulSet and PodDisruptionBudget, from (dict "root" $ "shard" i): short
enough for the StatefulSet's controller-revision-hash label (63 characters). */}}
{{- define "ebs-analyzer.shardName" -}}
{{- printf "%s-shard-%d" (include "ebs-analyzer.fullname" .root | trunc 42 | trimSuffix "-") (int .shard) }}
{{- end }}

{{- define "ebs-analyzer.shardSelectorLabels" -}}
{{ include "ebs-analyzer.selectorLabels" .root }}
ebs-analyzer/shard: {{ .shard | toString | quote }}
{{- end }}

{{/* The headless Service the StatefulSets are governed by, and the ServiceMonitor scrapes. */}}
{{- define "ebs-analyzer.headlessName" -}}
{{- printf "%s-headless" (include "ebs-analyzer.fullname" . | trunc 54 | trimSuffix "-") }}
{{- end }}

{{/* What the StatefulSets cannot run with. A shard's replicas post the same alerts: only
Alertmanager, which every replica posts to, sends each of them once. */}}
{{- define "ebs-analyzer.checkShards" -}}
{{- $replicas := int .Values.replicasPerShard }}
{{- if and .Values.persistence.enabled .Values.persistence.existingClaim }}
{{- fail "persistence.existingClaim: with shards or replicasPerShard above 1 every pod gets a claim of its own; unset it" }}
{{- end }}
{{- if gt $replicas 1 }}
{{- $env := list }}
{{- range .Values.extraEnv }}{{ $env = append $env .name }}{{ end }}
{{- $slack := "" }}
{{- if .Values.slack.existingSecret }}{{ $slack = "slack.existingSecret" }}
{{- else if .Values.slack.webhookUrl }}{{ $slack = "slack.webhookUrl" }}
{{- else if hasKey .Values.settings "slack_webhook_file" }}{{ $slack = "settings.slack_webhook_file" }}
{{- else }}
{{- range list "SLACK_WEBHOOK_URL" "EBS_ANALYZER_SLACK_WEBHOOK_URL" "EBS_ANALYZER_SLACK_WEBHOOK_FILE" }}
{{- if and (not $slack) (has . $env) }}{{ $slack = printf "extraEnv %s" . }}{{ end }}
{{- end }}
{{- end }}
{{- if $slack }}
{{- fail (printf "replicasPerShard is %d: each replica would post every alert to Slack (%s); unset it and send Slack from Alertmanager, which sends each alert once" $replicas $slack) }}
{{- end }}
{{- $alertmanager := or .Values.alertmanager.urls (has "EBS_ANALYZER_ALERTMANAGER_URL" $env) }}
{{- range .Values.extraArgs }}{{ if hasPrefix "--alertmanager-url" . }}{{ $alertmanager = true }}{{ end }}{{ end }}
{{- if not $alertmanager }}
{{- fail (printf "replicasPerShard is %d and alertmanager.urls is empty: point every replica at every Alertmanager (alertmanager.urls), which sends each alert once" $replicas) }}
{{- end }}
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
{{- $own := dict "region" "regions" "tag" "tags" "alertmanager_url" "alertmanager.urls" "rules" "rules" "slack_webhook_url" "slack.webhookUrl" "slack_signing_secret" "slack.signingSecret" "apply_approvers" "apply.approvers" "state_file" "persistence" "listen" "service.port" "shard" "shards" "total_shards" "shards" }}
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

{{/* The analyzer's pod: its metadata and spec. Takes (dict "root" $) for the Deployment,
(dict "root" $ "shard" i) for shard i's StatefulSet. */}}
{{- define "ebs-analyzer.podTemplate" -}}
{{- $root := .root }}
{{- $sharded := hasKey . "shard" }}
{{- $shard := .shard }}
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
    {{- if $sharded }}
    ebs-analyzer/shard: {{ $shard | toString | quote }}
    {{- end }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "ebs-analyzer.serviceAccountName" . }}
  # Nothing calls the Kubernetes API; IRSA's token is mounted by EKS regardless.
  # Only a claim's fix applied through the Kubernetes API (apply.kubernetes) calls it.
  automountServiceAccountToken: {{ .Values.apply.kubernetes }}
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
        {{- if $sharded }}
        - name: EBS_ANALYZER_SHARD
          value: {{ $shard | toString | quote }}
        - name: EBS_ANALYZER_TOTAL_SHARDS
          value: {{ .Values.shards | int | toString | quote }}
        # The pod's own name: which replica of the shard this is.
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- end }}
        {{- if include "ebs-analyzer.slackSecret" . }}
        - name: SLACK_WEBHOOK_URL
          valueFrom:
            secretKeyRef:
              name: {{ include "ebs-analyzer.slackSecret" . }}
              key: {{ .Values.slack.existingSecretKey }}
        {{- if .Values.apply.approvers }}
        # Slack approvals: the app's signing secret, beside the webhook, and who may approve.
        - name: SLACK_SIGNING_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ include "ebs-analyzer.slackSecret" . }}
              key: {{ .Values.slack.existingSigningSecretKey }}
        - name: EBS_ANALYZER_APPLY_APPROVERS
          value: {{ join "," .Values.apply.approvers | quote }}
        {{- end }}
        {{- end }}
        {{- if .Values.apply.kubernetes }}
        - name: EBS_ANALYZER_APPLY_THROUGH_KUBERNETES
          value: "true"
        {{- with .Values.apply.cluster }}
        - name: EBS_ANALYZER_KUBERNETES_CLUSTER
          value: {{ . | quote }}
        {{- end }}
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
    {{- /* A shard's pods with persistence each have a claim of their own, "state", from
    the StatefulSet's volumeClaimTemplates. */}}
    {{- if not (and $sharded .Values.persistence.enabled) }}
    - name: state
      {{- if .Values.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ default (include "ebs-analyzer.fullname" .) .Values.persistence.existingClaim }}
      {{- else }}
      emptyDir: {}
      {{- end }}
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
  {{- $affinity := deepCopy .Values.affinity }}
  {{- if and $sharded (gt (int .Values.replicasPerShard) 1) }}
  {{- /* Keep the replicas of one shard apart, on top of whatever the affinity value says. */}}
  {{- $selector := dict "matchLabels" (include "ebs-analyzer.shardSelectorLabels" (dict "root" $root "shard" $shard) | fromYaml) }}
  {{- $key := .Values.replicaAntiAffinity.topologyKey }}
  {{- $anti := get $affinity "podAntiAffinity" | default (dict) }}
  {{- if eq .Values.replicaAntiAffinity.type "required" }}
  {{- $terms := get $anti "requiredDuringSchedulingIgnoredDuringExecution" | default (list) }}
  {{- $_ := set $anti "requiredDuringSchedulingIgnoredDuringExecution" (append $terms (dict "labelSelector" $selector "topologyKey" $key)) }}
  {{- else }}
  {{- $terms := get $anti "preferredDuringSchedulingIgnoredDuringExecution" | default (list) }}
  {{- $term := dict "weight" 100 "podAffinityTerm" (dict "labelSelector" $selector "topologyKey" $key) }}
  {{- $_ := set $anti "preferredDuringSchedulingIgnoredDuringExecution" (append $terms $term) }}
  {{- end }}
  {{- $_ := set $affinity "podAntiAffinity" $anti }}
  {{- end }}
  {{- with $affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{/* The node agent's objects (DaemonSet, ServiceAccount, Service, ServiceMonitor). */}}
{{- define "ebs-analyzer.nodeFullname" -}}
{{- printf "%s-node" (include "ebs-analyzer.fullname" . | trunc 58 | trimSuffix "-") }}
{{- end }}

{{/* The node agent's selector labels. Its app.kubernetes.io/name is the chart's with -node:
every selector of the analyzer (its Deployment's, which cannot change once applied, its
Services', its StatefulSets' and budgets') holds the chart's name, so none of them ever
selects a node pod, and the node agent's select no analyzer pod. */}}
{{- define "ebs-analyzer.nodeSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-node" (include "ebs-analyzer.name" . | trunc 58 | trimSuffix "-") }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ebs-analyzer.nodeLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "ebs-analyzer.nodeSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: node
app.kubernetes.io/part-of: ebs-bottleneck-analyzer
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ebs-analyzer.nodeServiceAccountName" -}}
{{- if .Values.node.serviceAccount.create }}
{{- default (include "ebs-analyzer.nodeFullname" .) .Values.node.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.node.serviceAccount.name }}
{{- end }}
{{- end }}
