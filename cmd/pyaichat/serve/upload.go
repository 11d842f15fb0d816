package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// serveUpload stores a file dropped on the page in the session's upload
// directory and answers {"path"}; the page then inserts that path at the
// prompt with injectFiles. The name comes URL-encoded in X-File-Name, the
// token in "Authorization: Bearer"; a session's files together stay
// within the upload limit.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	if s.refuse(w, r, s.bearerToken) {
		return
	}
	sess, err := s.lookup(r.PathValue("session"))
	if err != nil {
		http.Error(w, "serve: "+err.Error(), http.StatusNotFound)
		return
	}
	name, err := uploadName(r.Header.Get("X-File-Name"))
	if err != nil {
		http.Error(w, "serve: "+err.Error(), http.StatusBadRequest)
		return
	}
	path, err := s.store(sess, name, r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, fmt.Sprintf("serve: the session's uploads would pass %d bytes", s.opts.UploadLimit), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, "serve: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"path": path})
}

// uploadName is the base name a dropped file is stored under.
func uploadName(escaped string) (string, error) {
	name, err := url.PathUnescape(escaped)
	if err != nil {
		return "", fmt.Errorf("X-File-Name: %v", err)
	}
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" || name == ".." ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("X-File-Name %q is not a usable file name", escaped)
	}
	return name, nil
}

// store writes body as name in sess's upload directory (name-1, name-2
// and so on when taken), within what is left of the upload limit.
func (s *Server) store(sess *session, name string, body io.Reader) (string, error) {
	if err := os.MkdirAll(sess.uploadDir, 0o700); err != nil {
		return "", fmt.Errorf("making the upload directory: %w", err)
	}
	left := s.opts.UploadLimit - dirSize(sess.uploadDir)
	f, path, err := createFree(sess.uploadDir, name)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, http.MaxBytesReader(nil, io.NopCloser(body), max(left, 0)))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

func createFree(dir, name string) (*os.File, string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; i < 1000; i++ {
		try := name
		if i > 0 {
			try = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		path := filepath.Join(dir, try)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, path, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("storing the upload: %w", err)
		}
	}
	return nil, "", fmt.Errorf("storing the upload: too many files named %q", name)
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}
