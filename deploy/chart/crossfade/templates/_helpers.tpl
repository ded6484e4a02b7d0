{{/*
Names and labels shared by every template. crossfade.fullname, crossfade.labels,
crossfade.selectorLabels and crossfade.serviceAccountName are used by the ClusterRole
templates too: keep their names.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "crossfade.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of every object: fullnameOverride, else <release>-<name>, or the release name
alone when it already contains the chart name. 63 characters at most: label values and
DNS-1123 labels (the Service) allow no more.
*/}}
{{- define "crossfade.fullname" -}}
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

{{/* The helm.sh/chart label: name-version. */}}
{{- define "crossfade.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "crossfade.labels" -}}
helm.sh/chart: {{ include "crossfade.chart" . }}
{{ include "crossfade.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels that select the controller's pods: they never change over upgrades. */}}
{{- define "crossfade.selectorLabels" -}}
app.kubernetes.io/name: {{ include "crossfade.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount the pods run as. */}}
{{- define "crossfade.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "crossfade.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The controller image. */}}
{{- define "crossfade.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
"true" when the replicas elect a leader: with more than one. A single replica runs
without a Lease and is replaced with strategy Recreate, so two never write at once.
*/}}
{{- define "crossfade.leaderElection" -}}
{{- if gt (int .Values.replicas) 1 }}true{{ end }}
{{- end }}

{{/* The Lease the replicas contend for, in the release namespace. */}}
{{- define "crossfade.leaseName" -}}
{{- include "crossfade.fullname" . }}
{{- end }}

{{/*
Fails the render when extraArgs holds a Cloud Map flag (--cloudmap, --cloudmap-*, in the
list or the map form): those belong in the cloudMap value, which also renders the RBAC the
publisher reads with. Passed through extraArgs they would run it without (its informers
never sync: nothing is published), or fight the value's flags (the last one wins).
*/}}
{{- define "crossfade.cloudMap.checkExtraArgs" -}}
{{- $found := list }}
{{- if kindIs "map" .Values.extraArgs }}
{{- range $key, $_ := .Values.extraArgs }}
{{- if regexMatch "^(--)?cloudmap(-|$)" (toString $key) }}{{ $found = append $found (print "extraArgs." $key) }}{{ end }}
{{- end }}
{{- else }}
{{- range $i, $arg := .Values.extraArgs }}
{{- if regexMatch "^--cloudmap([-=]|$)" (toString $arg) }}{{ $found = append $found (printf "extraArgs[%d] %s" $i $arg) }}{{ end }}
{{- end }}
{{- end }}
{{- with $found }}
{{- fail (printf "%s: set Cloud Map through the cloudMap value (cloudMap.enabled, .clusterId, .namespaces, .endpoint, .operationTimeout), not extraArgs: cloudMap.enabled also grants the RBAC the publisher needs (list and watch of Services and EndpointSlices)" (join ", " .)) }}
{{- end }}
{{- end }}

{{/*
Fails the render when extraArgs holds a flag of `controller --cutovers` (--cutovers,
--dns-server, --elbv2-endpoint, --cloudwatch-endpoint, in the list or the map form):
those belong in the cutovers value, which also renders the Cutover CRD, the RBAC Cutovers
are run with and the scratch volume their runs write in. Passed through extraArgs they
would run Cutovers without them (the controller stops at start: forbidden, or no
directory to write in), or fight the value's flags (the last one wins).
*/}}
{{- define "crossfade.cutovers.checkExtraArgs" -}}
{{- $flags := "cutovers|dns-server|elbv2-endpoint|cloudwatch-endpoint" }}
{{- $found := list }}
{{- if kindIs "map" .Values.extraArgs }}
{{- range $key, $_ := .Values.extraArgs }}
{{- if regexMatch (printf "^(--)?(%s)$" $flags) (toString $key) }}{{ $found = append $found (print "extraArgs." $key) }}{{ end }}
{{- end }}
{{- else }}
{{- range $i, $arg := .Values.extraArgs }}
{{- if regexMatch (printf "^--(%s)(=|$)" $flags) (toString $arg) }}{{ $found = append $found (printf "extraArgs[%d] %s" $i $arg) }}{{ end }}
{{- end }}
{{- end }}
{{- with $found }}
{{- fail (printf "%s: set Cutovers through the cutovers value (cutovers.enabled, .dnsServers, .elbv2Endpoint, .cloudwatchEndpoint), not extraArgs: cutovers.enabled also installs the Cutover CRD, grants the RBAC Cutovers need and mounts the scratch volume their runs write in" (join ", " .)) }}
{{- end }}
{{- end }}
