{{/* The objects' base name: the release name, with "-maitento" unless it already holds it. */}}
{{- define "maitento.fullname" -}}
{{- if contains "maitento" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-maitento" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "maitento.labels" -}}
app.kubernetes.io/name: maitento
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "maitento.selector" -}}
app.kubernetes.io/name: maitento
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "maitento.image" -}}
{{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end -}}

{{- define "maitento.secretName" -}}
{{- default (printf "%s-secrets" (include "maitento.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* What every container of Maitento shares: environment, security context, mounts. */}}
{{- define "maitento.containerCommon" -}}
envFrom:
  - configMapRef:
      name: {{ include "maitento.fullname" . }}-config
  - secretRef:
      name: {{ include "maitento.secretName" . }}
{{ include "maitento.containerSecurity" . }}
{{- end -}}

{{/* Security context and mounts of every container, the migration Job's included (which has its own environment:
     it runs before the release's Secret and ConfigMap exist). */}}
{{- define "maitento.containerSecurity" -}}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- if .Values.database.caConfigMap }}
  - name: db-ca
    mountPath: /etc/maitento/db-ca
    readOnly: true
  {{- end }}
{{- end -}}

{{- define "maitento.podCommon" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  runAsGroup: 1000
  seccompProfile:
    type: RuntimeDefault
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: 64Mi
  {{- if .Values.database.caConfigMap }}
  - name: db-ca
    configMap:
      name: {{ .Values.database.caConfigMap }}
  {{- end }}
{{- end -}}
