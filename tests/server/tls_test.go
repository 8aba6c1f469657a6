package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files in dir, and returns their paths.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "streamsql test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

// TestTLS: with --tls-cert and --tls-key the server speaks HTTPS only, and
// streamsql --server https://... trusts it with --tls-ca.
func TestTLS(t *testing.T) {
	certFile, keyFile := selfSigned(t, t.TempDir())
	pemData, _ := os.ReadFile(certFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemData)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	addr := freeAddr(t)
	p := testenv.StartProc(t, 3*time.Minute, nil, bin, "server", "--data-dir", t.TempDir(), "--http", addr, "--tls-cert", certFile, "--tls-key", keyFile)
	t.Cleanup(func() {
		p.Signal(syscall.SIGTERM)
		p.Wait()
	})
	url := "https://" + addr
	waitFor(t, "the server's /healthz over HTTPS", func() bool {
		select {
		case <-p.Done():
			t.Fatalf("server exited: %v\n%s", p.Err, p.Output())
		default:
		}
		resp, err := c.Get(url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if code, body := status(t, c, "GET", url+"/api/v1/jobs", ""); code != 200 {
		t.Errorf("GET /api/v1/jobs over HTTPS: %d %s", code, body)
	}
	if resp, err := http.Get("http://" + addr + "/api/v1/jobs"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("plain HTTP was answered 200 by the HTTPS server")
		}
	}

	show := filepath.Join(t.TempDir(), "show.sql")
	os.WriteFile(show, []byte("CREATE TABLE t (n BIGINT) WITH ('connector'='blackhole');\nSHOW TABLES;\n"), 0o644)
	client := testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "-f", show)
	if err := client.Wait(); err == nil || !strings.Contains(client.Output(), "certificate") {
		t.Fatalf("a client that does not trust the certificate: %v\n%s", err, client.Output())
	}
	client = testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "--tls-ca", certFile, "-f", show)
	if err := client.Wait(); err != nil || !strings.Contains(client.Output(), "| t ") {
		t.Fatalf("a client with --tls-ca: %v\n%s", err, client.Output())
	}
}

// TestTLSNeedsBoth: --tls-cert without --tls-key is refused.
func TestTLSNeedsBoth(t *testing.T) {
	certFile, _ := selfSigned(t, t.TempDir())
	p := testenv.StartProc(t, time.Minute, nil, bin, "server", "--data-dir", t.TempDir(), "--http", freeAddr(t), "--tls-cert", certFile)
	if err := p.Wait(); err == nil || !strings.Contains(p.Output(), "--tls-cert and --tls-key go together") {
		t.Fatalf("--tls-cert alone: %v\n%s", err, p.Output())
	}
}
