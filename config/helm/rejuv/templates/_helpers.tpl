{{/*
The chart's templates read config's manifests from files/ (copied there by
make manifests) and do to them what config/default's kustomization does:
prefix names, move namespaced objects into the release's namespace, add
labels, and follow references to renamed objects.
*/}}

{{/* rejuv.name is the chart's name, or nameOverride. */}}
{{- define "rejuv.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 47 | trimSuffix "-" -}}
{{- end -}}

{{/*
rejuv.fullname prefixes every object's name: rejuv for a release named
rejuv (names then are config/default's), <release>-rejuv for others. 47
characters leave a Service name with the longest suffix (-webhook-service)
within 63.
*/}}
{{- define "rejuv.fullname" -}}
{{- $name := include "rejuv.name" . -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 47 | trimSuffix "-" -}}
{{- else if contains $name .Release.Name -}}
{{- .Release.Name | trunc 47 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 47 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
rejuv.prefixed is the release's name of one of config's objects, as
config/default's namePrefix makes it: (list $ "healer") gives rejuv-healer.
*/}}
{{- define "rejuv.prefixed" -}}
{{- printf "%s-%s" (include "rejuv.fullname" (index . 0)) (index . 1) -}}
{{- end -}}

{{/* rejuv.labels are on every object the chart installs. */}}
{{- define "rejuv.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: rejuv
{{- end -}}

{{/*
rejuv.objects reads a manifest of files/ into {objects: [...]}, for
fromYaml: (dict "root" $ "path" "files/rbac/role.yaml").
*/}}
{{- define "rejuv.objects" -}}
{{- $objects := list -}}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" (.root.Files.Get .path) -1 -}}
{{- $o := fromYaml $doc -}}
{{- if hasKey $o "Error" -}}
{{- fail (printf "%s: %s" $.path $o.Error) -}}
{{- end -}}
{{- if $o.kind -}}
{{- $objects = append $objects $o -}}
{{- end -}}
{{- end -}}
{{- if not $objects -}}
{{- fail (printf "%s: no objects; make manifests writes files/" .path) -}}
{{- end -}}
{{- toYaml (dict "objects" $objects) -}}
{{- end -}}

{{/*
rejuv.object renders one of config's objects as the release installs it:
prefixed (but CRDs), in the release's namespace when namespaced (config's
are in namespace system), with the chart's labels, or not at all when
crrExecutor=openkruise leaves it out: (dict "root" $ "object" $o).
*/}}
{{- define "rejuv.object" -}}
{{- if not (include "rejuv.omitted" .) -}}
{{- $o := .object -}}
{{- if ne $o.kind "CustomResourceDefinition" -}}
{{- $_ := set $o.metadata "name" (include "rejuv.prefixed" (list .root $o.metadata.name)) -}}
{{- end -}}
{{- if $o.metadata.namespace -}}
{{- $_ := set $o.metadata "namespace" .root.Release.Namespace -}}
{{- end -}}
{{- $_ := set $o.metadata "labels" (merge (default dict $o.metadata.labels) (include "rejuv.labels" .root | fromYaml)) -}}
---
{{ toYaml $o }}
{{- end -}}
{{- end -}}

{{/*
rejuv.openKruise is "true" with crrExecutor=openkruise, empty with
crrExecutor=rejuv; another value stops the install.
*/}}
{{- define "rejuv.openKruise" -}}
{{- $executor := .Values.crrExecutor -}}
{{- if not (has $executor (list "rejuv" "openkruise")) -}}
{{- fail (printf "crrExecutor: %q is not \"rejuv\" or \"openkruise\"" $executor) -}}
{{- end -}}
{{- if eq $executor "openkruise" -}}true{{- end -}}
{{- end -}}

{{/*
rejuv.omitted is "true" for one of config's objects that config/openkruise
leaves out (files/openkruise/omitted.yaml), with crrExecutor=openkruise:
(dict "root" $ "object" $o).
*/}}
{{- define "rejuv.omitted" -}}
{{- if include "rejuv.openKruise" .root -}}
{{- range (.root.Files.Get "files/openkruise/omitted.yaml" | fromYaml).objects -}}
{{- if and (eq .kind $.object.kind) (eq .name $.object.metadata.name) -}}true{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
rejuv.openKruisePatch is config/openkruise's version of one of config's
objects (the same kind and name in files/openkruise/<file>), or empty:
(dict "root" $ "file" "manager.yaml" "object" $o), for fromYaml.
*/}}
{{- define "rejuv.openKruisePatch" -}}
{{- if include "rejuv.openKruise" .root -}}
{{- range (include "rejuv.objects" (dict "root" .root "path" (printf "files/openkruise/%s" .file)) | fromYaml).objects -}}
{{- if and (eq .kind $.object.kind) (eq .metadata.name $.object.metadata.name) -}}
{{- toYaml . -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
rejuv.service points a webhook's or a CRD conversion's clientConfig.service
at the release's Service: (dict "root" $ "service" $service).
*/}}
{{- define "rejuv.service" -}}
{{- $_ := set .service "name" (include "rejuv.prefixed" (list .root .service.name)) -}}
{{- $_ = set .service "namespace" .root.Release.Namespace -}}
{{- end -}}

{{/* rejuv.webhookService is the name of the Service of the manager's webhooks. */}}
{{- define "rejuv.webhookService" -}}
{{- $service := first (include "rejuv.objects" (dict "root" . "path" "files/webhook/service.yaml") | fromYaml).objects -}}
{{- include "rejuv.prefixed" (list . $service.metadata.name) -}}
{{- end -}}

{{/* rejuv.certificate is the cert-manager Certificate of the webhooks. */}}
{{- define "rejuv.certificate" -}}
{{- include "rejuv.prefixed" (list . "serving-cert") -}}
{{- end -}}

{{/*
rejuv.injectCA annotates an object whose CA bundle cert-manager's
cainjector keeps: (dict "root" $ "object" $o).
*/}}
{{- define "rejuv.injectCA" -}}
{{- if .root.Values.certManager.enabled -}}
{{- $annotations := default dict .object.metadata.annotations -}}
{{- $_ := set $annotations "cert-manager.io/inject-ca-from" (printf "%s/%s" .root.Release.Namespace (include "rejuv.certificate" .root)) -}}
{{- $_ = set .object.metadata "annotations" $annotations -}}
{{- end -}}
{{- end -}}

{{/* rejuv.image is an image reference from image.healer or image.daemon: by digest when it has one. */}}
{{- define "rejuv.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
rejuv.pod sets what the values say of a pod spec:
(dict "root" $ "pod" $pod "values" .Values.manager).
*/}}
{{- define "rejuv.pod" -}}
{{- range $field := list "nodeSelector" "tolerations" "affinity" "priorityClassName" -}}
{{- $value := get $.values $field -}}
{{- if $value -}}
{{- $_ := set $.pod $field $value -}}
{{- else -}}
{{- $_ := unset $.pod $field -}}
{{- end -}}
{{- end -}}
{{- with .root.Values.imagePullSecrets -}}
{{- $_ := set $.pod "imagePullSecrets" . -}}
{{- end -}}
{{- end -}}

{{/* rejuv.prepareUninstallLabels are on the pre-delete hook's objects, by which they are found. */}}
{{- define "rejuv.prepareUninstallLabels" -}}
{{ include "rejuv.labels" . }}
app.kubernetes.io/component: prepare-uninstall
{{- end -}}

{{/* rejuv.prepareUninstallHook are the annotations of a pre-delete hook of that weight, deleted once it succeeds. */}}
{{- define "rejuv.prepareUninstallHook" -}}
helm.sh/hook: pre-delete
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/* rejuv.seconds is a duration of uninstall.timeout's form (90s, 2m, 1m30s) in whole seconds; another form stops the install. */}}
{{- define "rejuv.seconds" -}}
{{- $d := toString . -}}
{{- if or (eq $d "") (not (regexMatch "^([0-9]+h)?([0-9]+m)?([0-9]+s)?$" $d)) -}}
{{- fail (printf "uninstall.timeout: %q is not a duration such as 90s, 2m or 1m30s" $d) -}}
{{- end -}}
{{- $s := 0 -}}
{{- range $part := regexFindAll "[0-9]+[hms]" $d -1 -}}
{{- $n := trimSuffix "h" (trimSuffix "m" (trimSuffix "s" $part)) | atoi -}}
{{- if hasSuffix "h" $part -}}{{- $s = add $s (mul $n 3600) -}}{{- else if hasSuffix "m" $part -}}{{- $s = add $s (mul $n 60) -}}{{- else -}}{{- $s = add $s $n -}}{{- end -}}
{{- end -}}
{{- if eq $s 0 -}}
{{- fail (printf "uninstall.timeout: %q, want more than 0" $d) -}}
{{- end -}}
{{- $s -}}
{{- end -}}
