# Official Ruby client of the CRM REST API v1 (standard library only).
require 'json'
require 'net/http'
require 'openssl'
require 'securerandom'
require 'set'
require 'time'
require 'uri'
require_relative 'crm_client/resources'

module CrmClient
  VERSION = '0.1.0'

  # An error answer of the API (RFC 9457 problem details).
  class Error < StandardError
    attr_reader :status, :code, :detail, :errors, :request_id

    def initialize(status, code, detail, errors, request_id)
      super("#{status} #{code}: #{detail}")
      @status, @code, @detail, @errors, @request_id = status, code, detail, errors, request_id
    end
  end
  class BadRequest < Error; end
  class Unauthorized < Error; end
  class Forbidden < Error; end
  class NotFound < Error; end
  class Conflict < Error; end # a record's state refused it (or an unfinished Idempotency-Key)
  class RateLimited < Error; end
  class ServerError < Error; end

  # 412: the record is no longer at the version given in If-Match; +current+ is the record as it
  # is now (nil when the key may not read it).
  class PreconditionFailed < Error
    attr_reader :current

    def initialize(status, code, detail, errors, request_id, current = nil)
      super(status, code, detail, errors, request_id)
      @current = current
    end
  end

  def self.error_class(status)
    { 401 => Unauthorized, 403 => Forbidden, 404 => NotFound, 409 => Conflict, 412 => PreconditionFailed, 429 => RateLimited }
      .fetch(status) { status >= 500 ? ServerError : BadRequest }
  end

  # Query parameters in REST's words: arrays comma-separated (status=sent,paid), hashes in
  # brackets (due_date[lt]=..., customer[search]=..., invoices[due_date][lt]=...), dates and
  # times in ISO 8601, nil left out. A list's +where:+ filters sit beside the others.
  def self.query_pairs(query)
    where = query[:where] || {}
    pairs = []
    add = lambda do |name, value|
      case value
      when nil then nil
      when Hash then value.each { |key, inner| add.call("#{name}[#{key}]", inner) }
      when Array, Set then pairs << [name, value.map { |v| query_text(v) }.join(',')]
      else pairs << [name, query_text(value)]
      end
    end
    query.reject { |name, _| name == :where }.merge(where).each { |name, value| add.call(name.to_s, value) }
    pairs
  end

  def self.query_text(value)
    value.respond_to?(:iso8601) ? value.iso8601 : value.to_s
  end
  private_class_method :query_text

  # If-Match of a version: '"7"' (an entity tag given whole, such as '"7"' or '*', is sent as is).
  def self.entity_tag(version)
    text = version.to_s
    text.start_with?('"', 'W/') || text == '*' ? text : %("#{text}")
  end

  # The changes of a resource, oldest first: records as they are now, and for each deleted record
  # a tombstone {"id", "deleted" => true, "deleted_at", "version"}. +each+ follows next_cursor
  # until the last page; afterwards +cursor+ is where to resume later. It moves only once every
  # item of a page has been yielded, so leaving the loop early resumes at the unfinished page
  # (items may repeat, none is missed). Iterating again yields the changes made since.
  # Follows next_cursor from a first page until the last; +cursor+ then is where to resume. It
  # moves only once a page was yielded whole (leaving early repeats items, never skips one).
  module CursorWalk
    include Enumerable
    attr_reader :cursor

    def each
      return enum_for(:each) unless block_given?

      loop do
        # A cursor embeds its list's filters.
        result = collection.list(**(@cursor ? { cursor: @cursor } : first_query), limit: @limit)
        result['data'].each { |item| yield item }
        pagination = result['pagination']
        @cursor = pagination['next_cursor'] if pagination['next_cursor']
        break unless pagination['has_more'] && pagination['next_cursor']
      end
      self
    end
  end

  class Sync
    include CursorWalk

    def initialize(resource, cursor, updated_since, limit)
      @resource, @cursor, @limit = resource, cursor, limit
      @updated_since = updated_since.respond_to?(:iso8601) ? updated_since.iso8601 : updated_since
    end

    private

    def collection = @resource
    def first_query = { include_deleted: 'true', updated_since: @updated_since }
  end

  # Catching up on the event log: the events committed after an event, oldest first. +each+
  # follows next_cursor until the last page; afterwards +cursor+ is where to resume later. It
  # moves only once every event of a page has been yielded, so leaving the loop early resumes at
  # the unfinished page (events may repeat, none is missed). Iterating again yields the events
  # committed since.
  class EventSync
    include CursorWalk

    def initialize(events, event_id, cursor, type, limit)
      raise ArgumentError, 'events.since needs an event id, or the cursor: of an earlier catch-up' if event_id.nil? && cursor.nil?

      @events, @event_id, @cursor, @type, @limit = events, event_id, cursor, type, limit
    end

    private

    def collection = @events
    def first_query = { after: @event_id, type: @type }
  end

  # list, get and each of a collection.
  class Pages
    def initialize(client, path)
      @client, @path = client, path
    end

    # One page: {"data" => [...], "pagination" => {"page", "limit", "total", "next_cursor", "has_more"}}.
    #
    # Sorted by +order_by:+ (%w[due_date -total_amount]; '-' sorts descending), filtered by
    # +where:+ (or the same filters as keyword arguments): ranges { gte: 10000, lt: 50000 }
    # (Date and Time allowed; a bare value matches exactly), sets %w[sent paid], exact values,
    # search, and a related list's filters one level deep ({ customer: { search: 'acme' } },
    # { invoices: { status: 'sent' } }). +expand:+ (%w[customer]) answers references as records
    # beside their ids; +fields:+ (%w[number]) only those fields (and id).
    def list(**params)
      @client.request('GET', "/#{@path}", query: params)
    end

    # One record; +expand:+ answers its references as records beside their ids, +fields:+ only
    # those fields (and id).
    def get(id, expand: nil, fields: nil)
      @client.request('GET', "/#{@path}/#{URI.encode_www_form_component(id)}", query: { expand: expand, fields: fields })
    end

    # Every record over all pages.
    def each(**params)
      return enum_for(:each, **params) unless block_given?

      params[:limit] ||= 100
      page = 1
      loop do
        result = list(**params, page: page)
        result['data'].each { |record| yield record }
        break if result['data'].empty? || page * result['pagination']['limit'] >= result['pagination']['total']

        page += 1
      end
    end

    private

    def item(id)
      "/#{@path}/#{URI.encode_www_form_component(id)}"
    end
  end

  # The event log: every committed change, {"id" => "evt_...", "type", "created_at", "data" =>
  # {"object", "previous_attributes"?}, "request_id"}. list/each: newest first (type:, limit:,
  # page:, cursor:, after:).
  class Events < Pages
    def initialize(client)
      super(client, 'events')
    end

    # Queues the event again, now: to one endpoint, or to every enabled endpoint that receives its type.
    def resend(id, endpoint_id = nil, idempotency_key: nil, dry_run: false)
      @client.request('POST', "#{item(id)}/resend", body: endpoint_id ? { endpoint_id: endpoint_id } : {},
                                                    idempotency_key: idempotency_key || SecureRandom.uuid, dry_run: dry_run)
    end

    # The events committed after +event_id+ (or after where +cursor+, from an earlier catch-up,
    # left off), oldest first, optionally of one +type+: iterate it, then save its +cursor+.
    def since(event_id = nil, cursor: nil, type: nil, limit: 100)
      EventSync.new(self, event_id, cursor, type, limit)
    end
  end

  # Where events are sent: {"id", "url", "description", "event_types", "enabled", "disabled_reason", ...}.
  class WebhookEndpoints < Pages
    def initialize(client)
      super(client, 'webhook_endpoints')
    end

    # { url:, description:, event_types:, enabled: }: answers the endpoint with its signing
    # 'secret' (whsec_...), this once. A retry answers the same secret (the call's Idempotency-Key).
    def create(body, idempotency_key: nil, dry_run: false)
      @client.request('POST', "/#{@path}", body: body, idempotency_key: idempotency_key || SecureRandom.uuid, dry_run: dry_run)
    end

    # The fields given are set (nil clears the description; enabled: true also clears disabled_reason).
    def update(id, patch, idempotency_key: nil, dry_run: false)
      @client.request('PATCH', item(id), body: patch, idempotency_key: idempotency_key || SecureRandom.uuid,
                                         content_type: 'application/merge-patch+json', dry_run: dry_run)
    end

    # Removes the endpoint, its pending deliveries and its delivery log.
    def delete(id, idempotency_key: nil, dry_run: false)
      @client.request('DELETE', item(id), idempotency_key: idempotency_key || SecureRandom.uuid, dry_run: dry_run)
      nil
    end

    # A new signing secret, answered this once in 'secret'; for 24 hours deliveries are signed with the old one too.
    def rotate_secret(id, idempotency_key: nil, dry_run: false)
      @client.request('POST', "#{item(id)}/rotate_secret", idempotency_key: idempotency_key || SecureRandom.uuid, dry_run: dry_run)
    end

    # Sends a signed webhook.ping now: {"status_code", "duration_ms", "error"} as the endpoint took it.
    def test(id)
      @client.request('POST', "#{item(id)}/test")
    end

    # The endpoint's delivery attempts, newest first: {"event_id", "status_code", "duration_ms", "error", "created_at"}.
    def deliveries(id, **params)
      @client.request('GET', "#{item(id)}/deliveries", query: params)
    end
  end

  # Every write takes +dry_run: true+ (sent as Prefer: dry-run): the server runs it and answers
  # what it would (the record, or the error it would raise), keeping nothing.
  class Resource < Pages
    def initialize(client, path, editable: true, sync: true, moves: [])
      super(client, path)
      @editable, @sync, @moves = editable, sync, moves.map(&:to_s)
    end

    def create(body, idempotency_key: nil, dry_run: false)
      # A generated key makes retries safe: a retried create never duplicates.
      write('POST', "/#{@path}", nil, idempotency_key, body: body, dry_run: dry_run)
    end

    # Creates the record holding +external_id+, or updates the live one that holds it with the
    # fields an update takes (PUT /{resource}/by_external_id/{external_id}); a created record is
    # at version 1. Concurrent upserts of one external id make one record.
    def upsert(external_id, body, idempotency_key: nil, dry_run: false)
      # A path segment: a space is %20 there (+ would be a plus).
      segment = URI.encode_www_form_component(external_id).gsub('+', '%20')
      write('PUT', "/#{@path}/by_external_id/#{segment}", nil, idempotency_key, body: body, dry_run: dry_run)
    end

    # Up to 100 writes in one transaction, each { op: 'create' | 'update' | 'upsert' | 'delete',
    # id:, external_id:, data:, if_match: }. Answers {"results" => [{"index", "status", "record"?,
    # "error"?}]}. +mode:+ 'atomic': every item or none (a refusal raises, its errors naming
    # items[i].field); 'partial': each item on its own, a refused one answered with its "error".
    def batch(items, mode: 'atomic', idempotency_key: nil, dry_run: false)
      write('POST', "/#{@path}/batch", nil, idempotency_key, body: { items: items, mode: mode }, dry_run: dry_run)
    end

    # A JSON merge patch: the fields given change, nil clears one (metadata merges key by key: a
    # key with nil is removed). With if_match (a version), raises PreconditionFailed unless the
    # record is still at that version.
    def update(id, patch, if_match: nil, idempotency_key: nil, dry_run: false)
      raise NoMethodError, "#{@path} cannot be edited through the REST API" unless @editable

      write('PATCH', item(id), if_match, idempotency_key, body: patch, dry_run: dry_run)
    end

    # Updates +record+ only if it is still at record['version']; otherwise raises
    # PreconditionFailed, whose +current+ is the record as it is now.
    def update_if_unchanged(record, patch, idempotency_key: nil, dry_run: false)
      update(record['id'], patch, if_match: record['version'], idempotency_key: idempotency_key, dry_run: dry_run)
    end

    # Soft delete: the record reads as NotFound until restored.
    def delete(id, if_match: nil, idempotency_key: nil, dry_run: false)
      write('DELETE', item(id), if_match, idempotency_key, dry_run: dry_run)
      nil
    end

    def restore(id, if_match: nil, idempotency_key: nil, dry_run: false)
      write('POST', "#{item(id)}/restore", if_match, idempotency_key, dry_run: dry_run)
    end

    # A change of status, such as invoices.transition(id, 'send').
    def transition(id, move, if_match: nil, idempotency_key: nil, dry_run: false)
      unless @moves.include?(move.to_s)
        raise ArgumentError, "#{@path} have no transition #{move.to_s.inspect}: one of #{@moves.empty? ? 'none' : @moves.join(', ')}"
      end

      write('POST', "#{item(id)}/#{move}", if_match, idempotency_key, dry_run: dry_run)
    end

    # One record's history: a page of its events, newest first (limit:, page:, cursor:).
    def events(id, **params)
      @client.request('GET', "#{item(id)}/events", query: params)
    end

    # Every change (records and tombstones), oldest first, from +cursor+ (or the first change, or
    # +updated_since+, an ISO 8601 string or a Time): iterate it, then save its +cursor+.
    def sync(cursor: nil, updated_since: nil, limit: 100)
      raise NoMethodError, "#{@path} have no sync" unless @sync

      Sync.new(self, cursor, updated_since, limit)
    end

    private

    # Every write carries an Idempotency-Key, the same on each retry: a retried write is applied once.
    def write(method, path, if_match, idempotency_key, body: nil, dry_run: false)
      @client.request(method, path, body: body, idempotency_key: idempotency_key || SecureRandom.uuid,
                                    if_match: if_match && CrmClient.entity_tag(if_match), dry_run: dry_run,
                                    content_type: method == 'PATCH' ? 'application/merge-patch+json' : 'application/json')
    end
  end

  # CSV files written in the background: {"id", "status" => "pending" | "running" | "completed" |
  # "failed", "resource", "mode", "total", "created", "updated", "failed", "errors" => [{"row",
  # "param", "message"}], ...}.
  class Imports
    def initialize(client)
      @client = client
    end

    # A CSV file (a header row of field names, metadata.<key> columns), each row created (mode
    # 'create') or upserted by its external_id ('upsert'): answers {"id", "status"}, to follow with get(id).
    def create(csv, resource:, mode: 'create', idempotency_key: nil, dry_run: false)
      @client.request('POST', '/imports', query: { resource: resource, mode: mode }, body: csv, content_type: 'text/csv',
                                          idempotency_key: idempotency_key || SecureRandom.uuid, dry_run: dry_run)
    end

    def get(id)
      @client.request('GET', "/imports/#{URI.encode_www_form_component(id)}")
    end
  end

  # The organization's recent API requests, newest first: {"request_id", "method", "path",
  # "status", "duration_ms", "error_code", "key_prefix", "created_at"}; list/each take status:
  # (400 or '4xx'), method:, request_id:. They are listed, not read one by one.
  class RequestLogs < Pages
    undef_method :get

    def initialize(client)
      super(client, 'request_logs')
    end
  end

  class Customers < Resource
    # Live customers sharing an e-mail or a phone, grouped (e-mail groups first): a page of
    # {"key" => "email" | "phone", "value", "count", "customers" => [...]} (page:, limit:, cursor:).
    def duplicates(**params)
      @client.request('GET', "/#{@path}/duplicates", query: params)
    end

    # Moves every job, e-mail, invoice, estimate and proposal of the +source_ids+ customers to
    # this one and deletes them, in one transaction; answers this customer.
    def merge(id, source_ids, if_match: nil, idempotency_key: nil, dry_run: false)
      write('POST', "#{item(id)}/merge", if_match, idempotency_key, body: { source_ids: source_ids }, dry_run: dry_run)
    end
  end

  # A webhook request that is not a delivery of the CRM signed with this secret, or too old (or
  # too far in the future) to accept.
  class WebhookVerificationError < StandardError; end

  WEBHOOK_TOLERANCE_SECONDS = 5 * 60

  # Verifies a webhook delivery per the Standard Webhooks specification and answers its event.
  # +body+ is the request body exactly as received (never re-serialized JSON); +headers+ a Hash of
  # the request's headers, names in any case (a Rack env's HTTP_WEBHOOK_ID too); +secret+ the
  # endpoint's whsec_... (the prefix is optional). Accepts the delivery when one of the +v1,+
  # signatures of webhook-signature (two during a rotation) is the HMAC-SHA256 of
  # "{webhook-id}.{webhook-timestamp}.{body}", compared in constant time, and the timestamp is
  # within +tolerance+ seconds (5 minutes) of now, either way; otherwise raises
  # WebhookVerificationError.
  def self.verify_webhook(body, headers, secret, tolerance: WEBHOOK_TOLERANCE_SECONDS, now: Time.now)
    raise TypeError, 'verify_webhook needs the raw request body (a String), not parsed JSON' unless body.is_a?(String)

    key = begin
      secret.delete_prefix('whsec_').unpack1('m0') # strict base64
    rescue ArgumentError
      ''
    end
    raise ArgumentError, "The webhook secret must be the endpoint's whsec_... secret (base64 after whsec_)" if key.empty?

    id, timestamp, signatures = %w[webhook-id webhook-timestamp webhook-signature].map { |name| webhook_header(headers, name) }
    raise WebhookVerificationError, 'Missing webhook-id, webhook-timestamp or webhook-signature header' if [id, timestamp, signatures].any? { |v| v.nil? || v.empty? }

    timestamp = timestamp.strip
    raise WebhookVerificationError, 'Invalid webhook-timestamp header' unless timestamp.match?(/\A\d{1,15}\z/)

    age = now.to_i - timestamp.to_i
    raise WebhookVerificationError, 'The webhook timestamp is too old' if age > tolerance
    raise WebhookVerificationError, 'The webhook timestamp is too far in the future' if age < -tolerance

    expected = OpenSSL::HMAC.digest('SHA256', key, "#{id}.#{timestamp}.".b + body.b)
    valid = false
    signatures.split.each do |entry|
      version, encoded = entry.split(',', 2)
      next unless version == 'v1' && encoded

      candidate = begin
        encoded.unpack1('m0')
      rescue ArgumentError
        next
      end
      valid = true if OpenSSL.secure_compare(candidate, expected) # constant time (over digests of both)
    end
    raise WebhookVerificationError, 'No webhook signature matches: wrong secret, or the body was altered' unless valid

    begin
      JSON.parse(body)
    rescue JSON::ParserError
      raise WebhookVerificationError, 'The webhook body is not JSON'
    end
  end

  def self.webhook_header(headers, name)
    headers.each do |key, value|
      next unless [name, "http-#{name}"].include?(key.to_s.downcase.tr('_', '-'))

      return value.is_a?(Array) ? value.join(' ') : value.to_s
    end
    nil
  end
  private_class_method :webhook_header

  # client = CrmClient::Client.new(api_key: 'svc_live_...', base_url: 'http://localhost:3000/v1'); a
  # resource's reader (customers, jobs, ...) is made from the generated Resources.
  class Client
    include Resources
    attr_reader :events, :webhook_endpoints, :imports, :request_logs

    def initialize(api_key: ENV['CRM_API_KEY'], base_url: ENV['CRM_BASE_URL'] || 'http://localhost:3000/v1', timeout: 30, max_retries: 3)
      raise ArgumentError, 'An API key is required: pass api_key or set CRM_API_KEY.' if api_key.nil? || api_key.empty?

      @api_key, @base_url, @timeout, @max_retries = api_key, base_url.chomp('/'), timeout, max_retries
      make_resources
      @events = Events.new(self)
      @webhook_endpoints = WebhookEndpoints.new(self)
      @imports = Imports.new(self)
      @request_logs = RequestLogs.new(self)
    end

    # One HTTP exchange; raises on network failure.
    def send_request(uri, request)
      Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == 'https', open_timeout: @timeout, read_timeout: @timeout) do |http|
        http.request(request)
      end
    end

    def request(method, path, query: nil, body: nil, idempotency_key: nil, if_match: nil, content_type: 'application/json', dry_run: false)
      uri = URI(@base_url + path)
      pairs = query ? CrmClient.query_pairs(query) : []
      uri.query = URI.encode_www_form(pairs) unless pairs.empty?
      attempt = 0
      loop do
        request = Net::HTTP.const_get(method.capitalize).new(uri)
        request['Authorization'] = "Bearer #{@api_key}"
        request['Accept'] = 'application/json'
        request['User-Agent'] = "crm-client-ruby/#{VERSION}"
        request['Idempotency-Key'] = idempotency_key if idempotency_key
        request['If-Match'] = if_match if if_match
        request['Prefer'] = 'dry-run' if dry_run
        if body
          request['Content-Type'] = content_type
          # A file (an import's CSV) is sent as it is.
          request.body = body.is_a?(String) && content_type.start_with?('text/') ? body : JSON.generate(body)
        end
        begin
          response = send_request(uri, request)
        rescue SystemCallError, IOError, Net::OpenTimeout, Net::ReadTimeout
          raise if attempt >= @max_retries

          sleep(backoff(attempt))
          attempt += 1
          next
        end
        status = response.code.to_i
        # A 409 with Retry-After: a request with the same Idempotency-Key is still running.
        retryable = [429, 503].include?(status) || (status == 409 && response['Retry-After'])
        if retryable && attempt < @max_retries
          retry_after = response['Retry-After']
          sleep(retry_after&.match?(/\A\d+\z/) ? retry_after.to_i : backoff(attempt))
          attempt += 1
          next
        end
        payload = response.body.nil? || response.body.empty? ? nil : JSON.parse(response.body)
        return payload if status.between?(200, 299)

        payload ||= {}
        problem = [status, payload['code'] || 'UNKNOWN', payload['detail'] || '', payload['errors'] || [], payload['request_id'] || response['X-Request-Id']]
        raise PreconditionFailed.new(*problem, payload['current']) if status == 412

        raise CrmClient.error_class(status).new(*problem)
      end
    end

    private

    # Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ...
    def backoff(attempt)
      rand * 0.5 * (2**attempt)
    end
  end
end
