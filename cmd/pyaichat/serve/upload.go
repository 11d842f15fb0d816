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
	switch {
	case errors.Is(err, errUploadLimit):
		http.Error(w, fmt.Sprintf("serve: the session's uploads would pass %d bytes", s.opts.UploadLimit), http.StatusRequestEntityTooLarge)
		return
	case errors.Is(err, errSessionEnded):
		http.Error(w, "serve: "+err.Error(), http.StatusGone)
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

// errSessionEnded refuses an upload to a session whose child has exited.
var errSessionEnded = errors.New("the session has exited; its uploads are gone")

// errUploadLimit refuses an upload that would take the session past its
// upload limit.
var errUploadLimit = errors.New("upload limit reached")

// store writes body as name in sess's upload directory (name-1, name-2
// and so on when taken). The bytes count against the session's limit as
// they are written, so uploads running at once share it.
func (s *Server) store(sess *shell, name string, body io.Reader) (string, error) {
	f, path, err := sess.createUpload(name)
	if err != nil {
		return "", err
	}
	w := &quotaWriter{sess: sess, f: f, limit: s.opts.UploadLimit}
	_, err = io.Copy(w, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && sess.uploadsEnded() {
		err = errSessionEnded // the directory went with the session
	}
	if err != nil {
		os.Remove(path)
		sess.releaseUpload(w.written)
		return "", err
	}
	return path, nil
}

// createUpload makes a new file for an upload, unless the session has
// ended: under the lock its end takes, so that no directory is made again
// after the end has removed it.
func (s *shell) createUpload(name string) (*os.File, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uploadsShut {
		return nil, "", errSessionEnded
	}
	if err := os.MkdirAll(s.uploadDir, 0o700); err != nil {
		return nil, "", fmt.Errorf("making the upload directory: %w", err)
	}
	return createFree(s.uploadDir, name)
}

func (s *shell) uploadsEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uploadsShut
}

// reserveUpload counts n more bytes against limit, or reports false.
func (s *shell) reserveUpload(n, limit int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uploaded+n > limit {
		return false
	}
	s.uploaded += n
	return true
}

func (s *shell) releaseUpload(n int64) {
	s.mu.Lock()
	s.uploaded -= n
	s.mu.Unlock()
}

// quotaWriter writes an upload's bytes while the session's limit has
// room for them.
type quotaWriter struct {
	sess    *shell
	f       *os.File
	limit   int64
	written int64 // reserved and written
}

func (w *quotaWriter) Write(p []byte) (int, error) {
	if !w.sess.reserveUpload(int64(len(p)), w.limit) {
		return 0, errUploadLimit
	}
	n, err := w.f.Write(p)
	w.written += int64(len(p))
	return n, err
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
