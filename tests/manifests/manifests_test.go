package manifests

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/allinone"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// TestKubernetesManifestsMatchTheAPISchemaAndKeepEveryDeploymentAvailable decodes every document
// of deploy/k8s strictly into the Kubernetes API's own types (an unknown or misspelt field fails,
// as the API server would refuse it), then checks what running each Deployment safely takes:
// probes on the ops port, resource requests, secrets by reference, and a disruption budget that
// selects its pods.
func TestKubernetesManifestsMatchTheAPISchemaAndKeepEveryDeploymentAvailable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "k8s", "berth.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deployments := map[string]appsv1.Deployment{}
	budgets := map[string]policyv1.PodDisruptionBudget{}
	for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var target any
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			target = &appsv1.Deployment{}
		case "v1 Service":
			target = &corev1.Service{}
		case "policy/v1 PodDisruptionBudget":
			target = &policyv1.PodDisruptionBudget{}
		default:
			t.Fatalf("document %d: unexpected %s %s", i, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, target); err != nil {
			t.Fatalf("document %d (%s): %v", i, head.Kind, err)
		}
		switch v := target.(type) {
		case *appsv1.Deployment:
			deployments[v.Name] = *v
		case *policyv1.PodDisruptionBudget:
			budgets[v.Name] = *v
		}
	}
	want := []string{"berth-gateway"}
	for _, m := range allinone.Modules {
		want = append(want, "berth-"+m.Name)
	}
	for _, name := range want {
		d, ok := deployments[name]
		if !ok {
			t.Errorf("no Deployment %s", name)
			continue
		}
		labels := d.Spec.Template.Labels
		for k, v := range d.Spec.Selector.MatchLabels {
			if labels[k] != v {
				t.Errorf("%s: its selector does not select its own pods", name)
			}
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
			t.Errorf("%s: fewer than 2 replicas", name)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for probe, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != "ops" {
					t.Errorf("%s/%s: no %s probe on the ops port", name, c.Name, probe)
				}
			}
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
				t.Errorf("%s/%s: no CPU and memory requests", name, c.Name)
			}
			// gRPC over mutual TLS: the three settings name files of the mounted berth-grpc-tls Secret.
			mounts := map[string]string{} // mount path -> volume
			for _, m := range c.VolumeMounts {
				mounts[m.MountPath] = m.Name
			}
			for _, v := range []string{"BERTH_GRPC_TLS_CA", "BERTH_GRPC_TLS_CERT", "BERTH_GRPC_TLS_KEY"} {
				path := ""
				for _, e := range c.Env {
					if e.Name == v {
						path = e.Value
					}
				}
				volume := mounts[filepath.Dir(path)]
				if path == "" || volume == "" || secretOf(d.Spec.Template.Spec.Volumes, volume) != "berth-grpc-tls" {
					t.Errorf("%s/%s: %s does not name a file of the mounted berth-grpc-tls Secret", name, c.Name, v)
				}
			}
			for _, e := range c.Env {
				secretish := strings.Contains(e.Name, "TOKEN") || strings.Contains(e.Name, "SECRET") || strings.Contains(e.Name, "PEPPER") ||
					strings.Contains(e.Name, "DATABASE_URL")
				if secretish && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
					t.Errorf("%s/%s: %s is not taken from a Secret", name, c.Name, e.Name)
				}
			}
		}
		if name != "berth-gateway" {
			checkMigrationStep(t, name, d.Spec.Template.Spec)
		}
		b, ok := budgets[name]
		if !ok {
			t.Errorf("no PodDisruptionBudget %s", name)
			continue
		}
		for k, v := range b.Spec.Selector.MatchLabels {
			if labels[k] != v {
				t.Errorf("PodDisruptionBudget %s does not select the Deployment's pods", name)
			}
		}
		if b.Spec.MaxUnavailable == nil && b.Spec.MinAvailable == nil {
			t.Errorf("PodDisruptionBudget %s bounds nothing", name)
		}
	}
}

// secretOf is the Secret a pod volume holds, "" for another kind of volume.
func secretOf(volumes []corev1.Volume, name string) string {
	for _, v := range volumes {
		if v.Name == name && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

// checkMigrationStep requires a service's pods to migrate its database before its server starts:
// an init container of the server's image running "migrate" with the server's database URL.
func checkMigrationStep(t *testing.T, name string, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Errorf("%s: want one server container and one migration init container", name)
		return
	}
	init, server := pod.InitContainers[0], pod.Containers[0]
	if init.Image != server.Image || !slices.Equal(init.Args, []string{"migrate"}) || len(init.Command) != 0 {
		t.Errorf("%s: the init container runs %v %v of %s, want the server's image %s with the argument migrate", name, init.Command, init.Args, init.Image, server.Image)
	}
	dbOf := func(c corev1.Container) string {
		for _, e := range c.Env {
			if e.Name == "BERTH_DATABASE_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			}
		}
		return ""
	}
	if db := dbOf(init); db == "" || db != dbOf(server) {
		t.Errorf("%s: the migration step's database %q is not the server's %q (from a Secret)", name, db, dbOf(server))
	}
	if init.Resources.Requests.Cpu().IsZero() || init.Resources.Requests.Memory().IsZero() {
		t.Errorf("%s: the migration step has no CPU and memory requests", name)
	}
}
