{{/*
rejuv.managerResources is the manager container's resources: the values'
manager.resources, with the memory request and limit that are not set
there sized by manager.clusterPods. Every replica caches every pod of the
cluster, so its memory grows with their number (docs/scale.md gives the
measurements): the limit is 160Mi and 8Ki a pod, the request 96Mi and 5Ki
a pod, each rounded up to 32Mi. With the default 10,000 pods: 256Mi and
160Mi. The limit is also the manager's GOMEMLIMIT.
*/}}
{{- define "rejuv.managerResources" -}}
{{- $values := .Values.manager -}}
{{- $pods := $values.clusterPods -}}
{{- $whole := false -}}
{{- if kindIs "float64" $pods -}}
{{- $whole = and (ge $pods 0.0) (eq $pods (float64 (int64 $pods))) -}}
{{- else if or (kindIs "int" $pods) (kindIs "int64" $pods) -}}
{{- $whole = ge (int64 $pods) 0 -}}
{{- end -}}
{{- if not $whole -}}
{{- fail (printf "manager.clusterPods: %v is not a whole number of pods at least 0" $pods) -}}
{{- end -}}
{{- $pods = int64 $pods -}}
{{- $resources := deepCopy (default dict $values.resources) -}}
{{- $requests := default dict $resources.requests -}}
{{- $limits := default dict $resources.limits -}}
{{- if not $limits.memory -}}
{{- $_ := set $limits "memory" (printf "%dMi" (include "rejuv.mebibytes" (list 160 8 $pods) | int64)) -}}
{{- end -}}
{{- if not $requests.memory -}}
{{- $_ := set $requests "memory" (printf "%dMi" (include "rejuv.mebibytes" (list 96 5 $pods) | int64)) -}}
{{- end -}}
{{- $_ := set $resources "requests" $requests -}}
{{- $_ = set $resources "limits" $limits -}}
{{- toYaml $resources -}}
{{- end -}}

{{/*
rejuv.mebibytes is (list BASE PERPOD PODS): BASE MiB and PERPOD KiB for
each of PODS, rounded up to a multiple of 32 MiB.
*/}}
{{- define "rejuv.mebibytes" -}}
{{- $kib := add (mul (index . 0) 1024) (mul (index . 1) (index . 2)) -}}
{{- $mib := div (add $kib 1023) 1024 -}}
{{- mul (div (add $mib 31) 32) 32 -}}
{{- end -}}
