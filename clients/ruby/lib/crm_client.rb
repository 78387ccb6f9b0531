# Official Ruby client of the CRM REST API v1 (standard library only).
require 'json'
require 'net/http'
require 'securerandom'
require 'uri'

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

  def self.error_class(status)
    { 401 => Unauthorized, 403 => Forbidden, 404 => NotFound, 409 => Conflict, 429 => RateLimited }.fetch(status) { status >= 500 ? ServerError : BadRequest }
  end

  class Resource
    def initialize(client, path, creatable)
      @client, @path, @creatable = client, path, creatable
    end

    # One page: {"data" => [...], "pagination" => {"page", "limit", "total"}}.
    def list(**params)
      @client.request('GET', "/#{@path}", query: params)
    end

    def get(id)
      @client.request('GET', "/#{@path}/#{URI.encode_www_form_component(id)}")
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

    def create(body, idempotency_key: nil)
      raise NoMethodError, "#{@path} cannot be created through the REST API" unless @creatable

      # A generated key makes retries safe: a retried create never duplicates.
      @client.request('POST', "/#{@path}", body: body, idempotency_key: idempotency_key || SecureRandom.uuid)
    end
  end

  # client = CrmClient::Client.new(api_key: 'svc_live_...', base_url: 'http://localhost:3000/v1')
  class Client
    attr_reader :customers, :jobs, :emails, :invoices, :estimates, :proposals

    def initialize(api_key: ENV['CRM_API_KEY'], base_url: ENV['CRM_BASE_URL'] || 'http://localhost:3000/v1', timeout: 30, max_retries: 3)
      raise ArgumentError, 'An API key is required: pass api_key or set CRM_API_KEY.' if api_key.nil? || api_key.empty?

      @api_key, @base_url, @timeout, @max_retries = api_key, base_url.chomp('/'), timeout, max_retries
      @customers = Resource.new(self, 'customers', true)
      @jobs = Resource.new(self, 'jobs', true)
      @emails = Resource.new(self, 'emails', false)
      @invoices = Resource.new(self, 'invoices', true)
      @estimates = Resource.new(self, 'estimates', false)
      @proposals = Resource.new(self, 'proposals', false)
    end

    # One HTTP exchange; raises on network failure.
    def send_request(uri, request)
      Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == 'https', open_timeout: @timeout, read_timeout: @timeout) do |http|
        http.request(request)
      end
    end

    def request(method, path, query: nil, body: nil, idempotency_key: nil)
      uri = URI(@base_url + path)
      uri.query = URI.encode_www_form(query.compact) if query && !query.empty?
      attempt = 0
      loop do
        request = Net::HTTP.const_get(method.capitalize).new(uri)
        request['Authorization'] = "Bearer #{@api_key}"
        request['Accept'] = 'application/json'
        request['User-Agent'] = "crm-client-ruby/#{VERSION}"
        request['Idempotency-Key'] = idempotency_key if idempotency_key
        if body
          request['Content-Type'] = 'application/json'
          request.body = JSON.generate(body)
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
        raise CrmClient.error_class(status).new(status, payload['code'] || 'UNKNOWN', payload['detail'] || '', payload['errors'] || [],
                                                payload['request_id'] || response['X-Request-Id'])
      end
    end

    private

    # Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ...
    def backoff(attempt)
      rand * 0.5 * (2**attempt)
    end
  end
end
