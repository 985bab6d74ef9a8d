-- MatrixOne's session variables for vector and full-text work (issue 38 item 7):
-- accepted with MatrixOne's ranges; the experimental_* switches are no-ops
-- (Tributary's HNSW and full-text indexes need no switch), tuning knobs of
-- index kinds Tributary does not build (IVF, IVF-PQ, k-means) are stored only.
SET experimental_hnsw_index = 1;
SET experimental_fulltext_index = 1;
SET experimental_ivf_index = 1;
SET experimental_ivfpq_index = 0;
SELECT @@experimental_hnsw_index, @@experimental_fulltext_index, @@experimental_ivfpq_index, @@probe_limit, @@kmeans_train_percent, @@ft_relevancy_algorithm;
SET probe_limit = 10, kmeans_train_percent = 2.5, kmeans_max_iteration = 100, ivf_threads_build = 4, hnsw_threads_search = 2, ivf_preload_entries = 1, fulltext_bloom_filter_pushdown = 1, ivfpq_max_index_capacity = 1000000;
SELECT @@probe_limit, @@kmeans_train_percent, @@kmeans_max_iteration, @@ivf_threads_build, @@ivf_preload_entries;
SET probe_limit = 0;
SET kmeans_max_iteration = 5;
SET kmeans_train_percent = 101;
SET ft_relevancy_algorithm = "bm25";
SET ft_relevancy_algorithm = "TF-IDF";
SET enable_vector_prefilter_by_default = 1, enable_vector_auto_mode_by_default = 0;
SET experimental_no_such_index = 1;
-- The switch off changes nothing: the index is built and used.
SET experimental_hnsw_index = 0;
CREATE DATABASE mo;
USE mo;
CREATE TABLE t (id INT PRIMARY KEY, v VECF32(2));
INSERT INTO t VALUES (1, '[0,0]'), (2, '[5,5]');
CREATE INDEX h USING HNSW ON t(v) OP_TYPE 'vector_l2_ops';
SELECT id FROM t ORDER BY l2_distance(v, '[4,4]') LIMIT 1;
