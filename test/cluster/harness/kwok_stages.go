package harness

// kwokStages is the configuration kwok runs with: what it does to the
// simulated nodes and the pods bound to them, in kwok's Stage format
// (kwok.x-k8s.io/v1alpha1). Written for the harness:
//
//   - a simulated node is made Ready, with the capacity of a large machine;
//     kwok renews its lease (--node-lease-duration-seconds), as a kubelet
//     does, so that it stays Ready;
//   - a pod bound to one is made Running and Ready at once, each container
//     with a containerID of its own (derived from the pod's UID and the
//     container's name, as a runtime's would be unique) and restartCount 0;
//   - a Running pod whose containers are ready but which is not Ready (the
//     node controller marks the pods of a node not ready when it misses the
//     node's lease, as kwok's lease renewals can be late on a busy machine)
//     is made Ready again, as the kubelet does once it reports again;
//     unless a readiness gate of Rejuv's (KruisePodReady) holds it out;
//   - a pod being deleted is deleted, as a kubelet does once its containers
//     have stopped.
//
// A container's restart (a new containerID, restartCount + 1) is not
// kwok's: whoever simulates one patches the pod's status itself, and these
// stages leave a Running pod alone.
const kwokStages = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: rejuv-node-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - address: {{ NodeIP | Quote }}
        type: InternalIP
      - address: {{ .metadata.name | Quote }}
        type: Hostname
      allocatable: {cpu: "64", memory: 256Gi, pods: "250"}
      capacity: {cpu: "64", memory: 256Gi, pods: "250"}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        containerRuntimeVersion: {{ printf "kwok://%s" Version | Quote }}
        kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
        kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
        kernelVersion: {{ printf "kwok-%s" Version | Quote }}
        bootID: ""
        machineID: ""
        osImage: ""
        systemUUID: ""
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: rejuv-pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $uid := .metadata.uid }}
      conditions:
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: PodReadyToStartContainers}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady}
      {{ range .spec.readinessGates }}
      - {lastTransitionTime: {{ $now | Quote }}, status: "True", type: {{ .conditionType | Quote }}}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        imageID: {{ printf "kwok://%s" .image | Quote }}
        containerID: {{ printf "containerd://%s" (printf "%s/%s" $uid .name | sha256sum) | Quote }}
        ready: true
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ with .spec.initContainers }}
      initContainerStatuses:
      {{ range . }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        imageID: {{ printf "kwok://%s" .image | Quote }}
        containerID: {{ printf "containerd://%s" (printf "%s/%s" $uid .name | sha256sum) | Quote }}
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        ready: true
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
        {{ else }}
        ready: true
        state:
          terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}
        {{ end }}
      {{ end }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      hostIPs:
      - ip: {{ NodeIPWith .spec.nodeName | Quote }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      qosClass: Burstable
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: rejuv-pod-ready-again
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values: ['False']
    - key: '.status.conditions.[] | select( .type == "ContainersReady" ) | .status'
      operator: 'In'
      values: ['True']
    - key: '.status.conditions.[] | select( .type == "KruisePodReady" ) | .status'
      operator: 'NotIn'
      values: ['False']
  next:
    statusTemplate: |
      conditions:
      - {lastTransitionTime: {{ Now | Quote }}, status: "True", type: Ready}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: rejuv-pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
`
