// Package deploy holds no code: it is where the deployment files are
// checked. docker-compose.yml and the Dockerfile at the repository root, the
// Prometheus configuration under deploy/prometheus and the Grafana
// provisioning and dashboard under deploy/grafana are loaded and
// cross-checked by this package's tests, against each other, against
// scripts/stack.sh (the same topology without Docker), and against a live
// replica's /metrics.
package deploy
